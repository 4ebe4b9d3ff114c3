"""aml-lint as a language server (``aml-lint --lsp``): diagnostics while typing, hover, key
completion and quick fixes in any editor that speaks the Language Server Protocol.

The protocol glue (:mod:`validator.lsp.server`) is the only module that imports pygls, the
``[lsp]`` extra; what it shows is computed by :mod:`validator.lsp.analysis` (linting an open
document, schema look-ups, hover text, completions) and :mod:`validator.lsp.edits` (the text
edits that fix a finding), which need nothing beyond the linter and are tested without a server.
Nothing here is imported by plain ``aml-lint``.
"""
