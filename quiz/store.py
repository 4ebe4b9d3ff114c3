"""The learner's progress: one SQLite file, every answer committed the moment it is given.

Tables:

    answers   one row per answer: session, question, the response (JSON), right or wrong,
              seconds taken, mode, when. The distractor memory is this table's wrong responses.
    cards     the FSRS card of each question the learner has met (fsrs' own JSON).
    sessions  one row per session: mode, question ids, and for an exam its live state (answers,
              flags, position, deadline), rewritten on every change, so an exam survives a
              crash or a closed terminal and resumes where it was.

SQLite's journal (WAL) makes each commit atomic and durable: a process killed between two
answers loses neither.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any

from .errors import ProgressError

FILE_NAME = "progress.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    mode TEXT NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    question_ids TEXT NOT NULL,
    state TEXT,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    question_id TEXT NOT NULL,
    response TEXT NOT NULL,
    correct INTEGER NOT NULL,
    seconds REAL NOT NULL,
    mode TEXT NOT NULL,
    answered_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_by_question ON answers(question_id, answered_at);
CREATE TABLE IF NOT EXISTS cards (
    question_id TEXT PRIMARY KEY,
    card TEXT NOT NULL,
    due REAL NOT NULL
);
"""


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("amllab", appauthor=False)) / "quiz"


class Progress:
    """The progress database in ``folder`` (created on first use)."""

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_data_dir()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.folder / FILE_NAME, isolation_level=None, timeout=10,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise ProgressError(f"cannot open the progress database in {self.folder}: {error} "
                                "(choose another folder with --data-dir)") from None

    @property
    def path(self) -> Path:
        return self.folder / FILE_NAME

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            raise ProgressError(f"cannot save progress to {self.path}: {error}") from None

    # ------------------------------------------------------------------------- sessions

    def start_session(self, mode: str, question_ids: list[str], state: dict[str, Any] | None = None,
                      now: float | None = None) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO sessions (mode, started, question_ids, state) VALUES (?, ?, ?, ?)",
                (mode, now if now is not None else time.time(), json.dumps(question_ids),
                 json.dumps(state) if state is not None else None))
            return int(cursor.lastrowid)

    def save_state(self, session_id: int, state: dict[str, Any]) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sessions SET state = ? WHERE id = ?", (json.dumps(state), session_id))

    def end_session(self, session_id: int, summary: dict[str, Any] | None = None, now: float | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sessions SET ended = ?, summary = ? WHERE id = ?",
                       (now if now is not None else time.time(), json.dumps(summary or {}), session_id))

    def unfinished(self, mode: str) -> dict[str, Any] | None:
        """The newest session of ``mode`` that never ended (an exam to resume), or None."""
        row = self._db.execute(
            "SELECT id, started, question_ids, state FROM sessions WHERE mode = ? AND ended IS NULL "
            "ORDER BY id DESC LIMIT 1", (mode,)).fetchone()
        if row is None:
            return None
        return {"id": row[0], "started": row[1], "question_ids": json.loads(row[2]),
                "state": json.loads(row[3]) if row[3] else {}}

    def sessions(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT id, mode, started, ended, summary FROM sessions ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [{"id": r[0], "mode": r[1], "started": r[2], "ended": r[3],
                 "summary": json.loads(r[4]) if r[4] else None} for r in rows]

    # ------------------------------------------------------------------------- answers and cards

    def record(self, session_id: int, question_id: str, response: Any, correct: bool, seconds: float,
               mode: str, card: Any | None = None, now: float | None = None) -> None:
        """One answer, and the question's new FSRS card, in one transaction."""
        at = now if now is not None else time.time()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO answers (session_id, question_id, response, correct, seconds, mode, answered_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, question_id, json.dumps(response), int(bool(correct)), float(seconds), mode, at))
            if card is not None:
                db.execute("INSERT OR REPLACE INTO cards (question_id, card, due) VALUES (?, ?, ?)",
                           (question_id, card.to_json(), card.due.timestamp()))

    def answers(self, question_id: str | None = None, session_id: int | None = None) -> list[dict[str, Any]]:
        query = "SELECT question_id, response, correct, seconds, mode, answered_at, session_id FROM answers"
        clauses, args = [], []
        if question_id is not None:
            clauses.append("question_id = ?")
            args.append(question_id)
        if session_id is not None:
            clauses.append("session_id = ?")
            args.append(session_id)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [{"question_id": r[0], "response": json.loads(r[1]), "correct": bool(r[2]), "seconds": r[3],
                 "mode": r[4], "answered_at": r[5], "session_id": r[6]} for r in rows]

    def last_wrong_response(self, question_id: str) -> Any:
        """The learner's most recent wrong response to the question (the distractor they fell
        for), or None."""
        row = self._db.execute(
            "SELECT response FROM answers WHERE question_id = ? AND correct = 0 ORDER BY id DESC LIMIT 1",
            (question_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def missed_last_time(self) -> list[str]:
        """Questions whose most recent answer was wrong, most recent first."""
        rows = self._db.execute(
            "SELECT question_id, correct FROM answers a WHERE id = "
            "(SELECT MAX(id) FROM answers b WHERE b.question_id = a.question_id) ORDER BY id DESC").fetchall()
        return [r[0] for r in rows if not r[1]]

    def cards(self) -> dict[str, Any]:
        from fsrs import Card

        return {qid: Card.from_json(text) for qid, text in self._db.execute("SELECT question_id, card FROM cards")}

    def card(self, question_id: str) -> Any | None:
        """The question's FSRS card, or None before its first answer."""
        from fsrs import Card

        row = self._db.execute("SELECT card FROM cards WHERE question_id = ?", (question_id,)).fetchone()
        return Card.from_json(row[0]) if row else None

    def due(self, now: datetime) -> list[str]:
        rows = self._db.execute("SELECT question_id FROM cards WHERE due <= ? ORDER BY due",
                                (now.timestamp(),)).fetchall()
        return [r[0] for r in rows]

    # ------------------------------------------------------------------------- stats

    def activity(self) -> dict[date, int]:
        """Answers given per local calendar day."""
        result: dict[date, int] = {}
        for (at,) in self._db.execute("SELECT answered_at FROM answers"):
            day = datetime.fromtimestamp(at).date()
            result[day] = result.get(day, 0) + 1
        return result

    def totals(self) -> tuple[int, int]:
        row = self._db.execute("SELECT COUNT(*), COALESCE(SUM(correct), 0) FROM answers").fetchone()
        return int(row[0]), int(row[1])

