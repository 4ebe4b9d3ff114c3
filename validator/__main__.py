"""`python -m validator` is `aml-lint`."""

import sys

from .cli import main

sys.exit(main())
