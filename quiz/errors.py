"""The quiz's errors.

    QuizError                 anything a user can cause; one clear message, never a traceback
    ├── BankError             a question file that cannot be used (file, line, question id, fix)
    └── ProgressError         the progress database cannot be opened or written
        ├── DamagedProgressError  (quiz.store) the file is damaged; left as it is
        ├── ExamBusyError         (quiz.store) another aml-quiz owns the unfinished exam
        └── ExamClosedError       (quiz.store) the exam was graded or closed elsewhere
"""

from __future__ import annotations


class QuizError(Exception):
    """An error the user can fix; ``str()`` is the whole message."""

    def __rich__(self) -> object:
        # Textual shows an exception that renders itself as just that, not as a traceback: an
        # error raised inside the app (the progress file damaged in use) ends it with one line.
        from rich.text import Text  # plain text: a path's brackets are not markup

        return Text(f"aml-quiz: error: {self}")


class BankError(QuizError):
    def __init__(self, path: str, line: int, question_id: str | None, problem: str, fix: str | None = None):
        self.path, self.line, self.question_id, self.problem, self.fix = path, line, question_id, problem, fix
        where = f"{path}:{line}"
        subject = f" question '{question_id}':" if question_id else ""
        message = f"{where}:{subject} {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)


class ProgressError(QuizError):
    pass
