"""The learner's progress: one SQLite file, every answer committed the moment it is given.

Tables:

    answers   one row per answer: session, question, the response (JSON), right or wrong,
              seconds taken, mode, when. The distractor memory is this table's wrong responses.
    cards     the FSRS card of each question the learner has met (fsrs' own JSON).
    settings  the learner's settings (JSON values): FSRS parameters fitted to their own reviews
              and the desired retention.
    sessions  one row per session: mode, question ids, and for an exam its live state (answers,
              flags, position, deadline), rewritten on every change, so an exam survives a
              crash or a closed terminal and resumes where it was.

SQLite's journal (WAL) makes each commit atomic and durable: a process killed between two
answers loses neither.

Several ``aml-quiz`` processes may share a data folder. Practice answers are rows of their own,
each written in one transaction with its card (the card is read and updated in that same
transaction), so nobody's answer overwrites another's. An exam is different: its live state is
one row that the owner rewrites, so only one process owns the unfinished exam at a time, through
an advisory lock on ``exam.lock`` (see :meth:`Progress.claim_exam`); the kernel frees it when the
owner exits or is killed. Grading is one transaction that first ends the session, and only if it
had not ended, so an exam is graded exactly once.

On open the file is checked (SQLite's ``quick_check``, and the write-ahead log's frames, which
SQLite would otherwise drop without a word when they are damaged). A damaged file raises
:class:`DamagedProgressError` and is left untouched; ``Progress(folder, reset_damaged=True)`` moves
it (and its -wal and -shm) aside as ``progress.sqlite3.damaged-<UTC time>`` and starts fresh.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import sqlite3
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from .errors import ProgressError

FILE_NAME = "progress.sqlite3"
# Held shared by every process that has the database open, exclusive while one checks it (or
# sets a damaged one aside): a check of the write-ahead log is only sound when nobody writes to it.
OPEN_LOCK = "progress.lock"
# Held exclusively by the process that owns the unfinished exam; holds that process's pid.
EXAM_LOCK = "exam.lock"
RESET_FLAG = "--reset-damaged-progress"

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
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("amllab", appauthor=False)) / "quiz"


class DamagedProgressError(ProgressError):
    """The progress file is damaged; nothing was changed. ``in_use``: another aml-quiz has it
    open, so it cannot be set aside now."""

    def __init__(self, path: Path, problem: str, in_use: bool = False):
        self.path, self.problem, self.in_use = path, problem, in_use
        if in_use:
            advice = "another aml-quiz has it open: close it, then start aml-quiz again"
        else:
            advice = (f"nothing was changed; start aml-quiz again and agree to set it aside, or pass "
                      f"{RESET_FLAG} to move it aside as {path.name}.damaged-<time> and start fresh")
        super().__init__(f"the progress database {path} is damaged ({problem}); {advice}")


class ExamBusyError(ProgressError):
    """Another process owns the unfinished exam."""

    def __init__(self, pid: int | None):
        self.pid = pid
        who = f"another aml-quiz (pid {pid})" if pid else "another aml-quiz"
        super().__init__(f"an exam is open in {who}; finish it there or close it")


class ExamClosedError(ProgressError):
    """The exam was submitted or abandoned elsewhere: this copy of it is stale."""

    def __init__(self, session_id: int):
        self.session_id = session_id
        super().__init__(f"exam #{session_id} was already submitted or closed by another aml-quiz; "
                         "its result is in the stats")


def _is_damage(error: Exception) -> bool:
    if isinstance(error, sqlite3.OperationalError):
        return "decode" in str(error)  # junk where text was
    # Corrupt, not a database, or text and JSON the file no longer holds.
    return isinstance(error, (sqlite3.DatabaseError, ValueError))


_Read = TypeVar("_Read", bound=Callable[..., Any])


def _reading(method: _Read) -> _Read:
    """A read whose failure (damage found in use, say) is one ProgressError, not a traceback."""

    @functools.wraps(method)
    def read(self: Progress, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, ValueError) as error:
            raise self._failure(error, "read") from None

    return read  # type: ignore[return-value]


class Progress:
    """The progress database in ``folder`` (created on first use, checked on every open).

    ``reset_damaged``: a damaged file is moved aside (see :attr:`set_aside`) and a fresh one
    started, instead of raising :class:`DamagedProgressError`."""

    def __init__(self, folder: Path | None = None, *, reset_damaged: bool = False):
        self.folder = Path(folder) if folder is not None else default_data_dir()
        # Where a damaged file was moved this time, if it was.
        self.set_aside: Path | None = None
        self._exam_lock: int | None = None
        self._open_lock: int | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._open_lock = os.open(self.folder / OPEN_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise ProgressError(f"cannot open the progress database in {self.folder}: {error} "
                                "(choose another folder with --data-dir)") from None
        alone = _try_flock(self._open_lock, fcntl.LOCK_EX)
        try:
            if not alone:
                fcntl.flock(self._open_lock, fcntl.LOCK_SH)
            problem = damage(self.path, check_wal=alone)
            if problem is not None:
                if not reset_damaged or not alone:
                    raise DamagedProgressError(self.path, problem, in_use=not alone)
                self.set_aside = set_aside(self.path)
            if not self.path.exists():
                self._create()
            self._db = self._connect()
        except BaseException:
            os.close(self._open_lock)
            self._open_lock = None
            raise
        if alone:
            fcntl.flock(self._open_lock, fcntl.LOCK_SH)

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=10, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            # The log is cut back after each checkpoint, so what follows its last frame is never a
            # stale older frame that the check on open would have to tell from damage.
            db.execute("PRAGMA journal_size_limit=0")
            db.executescript(_SCHEMA)
            return db
        except sqlite3.Error as error:
            raise self._failure(error, "open") from None

    def _create(self) -> None:
        """A new database, whole or not at all: built under a temporary name, then linked in (an
        empty progress file is therefore always a damaged one)."""
        temporary = self.folder / f".{FILE_NAME}.new-{os.getpid()}"
        for stale in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
            stale.unlink(missing_ok=True)
        try:
            db = sqlite3.connect(temporary, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
            finally:
                db.close()  # the last connection checkpoints: the schema is in the main file
            try:
                os.link(temporary, self.path)
            except FileExistsError:
                pass  # another process created it first: use theirs
        except (OSError, sqlite3.Error) as error:
            raise ProgressError(f"cannot create the progress database {self.path}: {error} "
                                "(choose another folder with --data-dir)") from None
        finally:
            temporary.unlink(missing_ok=True)

    @property
    def path(self) -> Path:
        return self.folder / FILE_NAME

    def close(self) -> None:
        self.release_exam()
        self._db.close()
        if self._open_lock is not None:
            os.close(self._open_lock)
            self._open_lock = None

    def _failure(self, error: Exception, doing: str) -> ProgressError:
        if _is_damage(error):
            # Damage found in use (after the check on open): quitting is the only safe move; the
            # next start checks the file and offers to set it aside.
            return ProgressError(f"the progress database {self.path} is damaged ({error}); every answer "
                                 "saved before this is in that file; start aml-quiz again to check it")
        return ProgressError(f"cannot {doing} the progress database {self.path}: {error}")

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
        except (sqlite3.Error, ValueError) as error:
            raise self._failure(error, "save progress to") from None

    def _rows(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(query, args).fetchall()

    # ------------------------------------------------------------------------- the exam's owner

    def claim_exam(self) -> None:
        """Own the unfinished exam (and the right to start a new one) until :meth:`release_exam`
        or this process ends; :class:`ExamBusyError` when another process owns it."""
        if self._exam_lock is not None:
            return
        try:
            fd = os.open(self.folder / EXAM_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise ProgressError(f"cannot open {self.folder / EXAM_LOCK}: {error}") from None
        if not _try_flock(fd, fcntl.LOCK_EX):
            try:
                text = os.read(fd, 32).decode("ascii", "replace").strip()
            finally:
                os.close(fd)
            raise ExamBusyError(int(text) if text.isdigit() else None)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._exam_lock = fd

    def release_exam(self) -> None:
        if self._exam_lock is not None:
            os.ftruncate(self._exam_lock, 0)
            os.close(self._exam_lock)  # closing the descriptor drops the lock
            self._exam_lock = None

    @property
    def owns_exam(self) -> bool:
        return self._exam_lock is not None

    def exam_owner(self) -> int | None:
        """The pid of another process that owns the unfinished exam (0 when its pid is unknown),
        or None when no other process does."""
        if self._exam_lock is not None:
            return None
        try:
            fd = os.open(self.folder / EXAM_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            if _try_flock(fd, fcntl.LOCK_EX):
                return None  # nobody: closing the descriptor lets it go again
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else 0
        finally:
            os.close(fd)

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
        """An unfinished session's live state; :class:`ExamClosedError` once it has ended (a stale
        copy must not write over the graded record)."""
        with self._transaction() as db:
            cursor = db.execute("UPDATE sessions SET state = ? WHERE id = ? AND ended IS NULL",
                                (json.dumps(state), session_id))
            if cursor.rowcount == 0:
                raise ExamClosedError(session_id)

    def end_session(self, session_id: int, summary: dict[str, Any] | None = None, now: float | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sessions SET ended = ?, summary = ? WHERE id = ? AND ended IS NULL",
                       (now if now is not None else time.time(), json.dumps(summary or {}), session_id))

    def grade_exam(self, session_id: int, answers: Sequence[tuple[str, Any, bool, float]],
                   review: Callable[[str, Any], Any], summary: dict[str, Any], now: float) -> None:
        """An exam's answers (question id, response, right, seconds), each question's new card
        (``review(question_id, old_card)``) and its end, in one transaction that runs only if the
        exam has not ended: graded exactly once, whoever else tries. :class:`ExamClosedError` if
        it had ended."""
        with self._transaction() as db:
            cursor = db.execute("UPDATE sessions SET ended = ?, summary = ? WHERE id = ? AND ended IS NULL",
                                (now, json.dumps(summary), session_id))
            if cursor.rowcount == 0:
                raise ExamClosedError(session_id)
            for question_id, response, correct, seconds in answers:
                self._insert_answer(db, session_id, question_id, response, correct, seconds, "exam", now)
                self._store_card(db, question_id, review(question_id, self._card_in(db, question_id)))
        if self._exam_lock is not None:
            self.release_exam()

    @_reading
    def unfinished(self, mode: str) -> dict[str, Any] | None:
        """The newest session of ``mode`` that never ended (an exam to resume), or None."""
        rows = self._rows(
            "SELECT id, started, question_ids, state FROM sessions WHERE mode = ? AND ended IS NULL "
            "ORDER BY id DESC LIMIT 1", (mode,))
        if not rows:
            return None
        row = rows[0]
        return {"id": row[0], "started": row[1], "question_ids": json.loads(row[2]),
                "state": json.loads(row[3]) if row[3] else {}}

    @_reading
    def sessions(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, mode, started, ended, summary FROM sessions ORDER BY id DESC LIMIT ?",
                          (limit,))
        return [{"id": r[0], "mode": r[1], "started": r[2], "ended": r[3],
                 "summary": json.loads(r[4]) if r[4] else None} for r in rows]

    # ------------------------------------------------------------------------- answers and cards

    def record(self, session_id: int, question_id: str, response: Any, correct: bool, seconds: float,
               mode: str, card: Any | None = None, now: float | None = None,
               review: Callable[[Any], Any] | None = None) -> None:
        """One answer, and the question's new FSRS card, in one transaction. ``review(old_card)``
        computes the card from the one stored when this transaction reads it, so two processes
        answering the same question both count; ``card`` is a card computed beforehand."""
        at = now if now is not None else time.time()
        with self._transaction() as db:
            self._insert_answer(db, session_id, question_id, response, correct, seconds, mode, at)
            if review is not None:
                card = review(self._card_in(db, question_id))
            if card is not None:
                self._store_card(db, question_id, card)

    @staticmethod
    def _insert_answer(db: sqlite3.Connection, session_id: int, question_id: str, response: Any, correct: bool,
                       seconds: float, mode: str, at: float) -> None:
        db.execute(
            "INSERT INTO answers (session_id, question_id, response, correct, seconds, mode, answered_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, question_id, json.dumps(response), int(bool(correct)), float(seconds), mode, at))

    @staticmethod
    def _card_in(db: sqlite3.Connection, question_id: str) -> Any | None:
        from fsrs import Card

        row = db.execute("SELECT card FROM cards WHERE question_id = ?", (question_id,)).fetchone()
        return Card.from_json(row[0]) if row else None

    @staticmethod
    def _store_card(db: sqlite3.Connection, question_id: str, card: Any) -> None:
        db.execute("INSERT OR REPLACE INTO cards (question_id, card, due) VALUES (?, ?, ?)",
                   (question_id, card.to_json(), card.due.timestamp()))

    @_reading
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
        rows = self._rows(query + " ORDER BY id", args)
        return [{"question_id": r[0], "response": json.loads(r[1]), "correct": bool(r[2]), "seconds": r[3],
                 "mode": r[4], "answered_at": r[5], "session_id": r[6]} for r in rows]

    @_reading
    def answered_ids(self) -> set[str]:
        """Every question the learner has answered at least once."""
        # The table itself, not its index: a damaged page of answers is found here, as on every read.
        return {row[0] for row in self._rows("SELECT question_id, correct FROM answers")}

    @_reading
    def flagged_ids(self) -> list[str]:
        """Questions the learner flagged in a graded exam, newest exam first."""
        found: list[str] = []
        for (text,) in self._rows("SELECT summary FROM sessions WHERE mode = 'exam' AND ended IS NOT NULL "
                                  "AND summary IS NOT NULL ORDER BY id DESC"):
            for question_id in (json.loads(text) or {}).get("flagged") or []:
                if question_id not in found:
                    found.append(question_id)
        return found

    @_reading
    def review_log(self) -> list[tuple[str, bool, float, float]]:
        """Every answer as (question id, right, seconds, when), oldest first: what FSRS fits on."""
        return [(r[0], bool(r[1]), float(r[2]), float(r[3])) for r in
                self._rows("SELECT question_id, correct, seconds, answered_at FROM answers ORDER BY id")]

    @_reading
    def scheduler_settings(self) -> dict[str, Any]:
        """The learner's FSRS settings: fitted ``parameters`` and ``desired_retention`` (empty:
        FSRS's defaults)."""
        rows = self._rows("SELECT value FROM settings WHERE key = 'fsrs'")
        return json.loads(rows[0][0]) if rows else {}

    def save_scheduler_settings(self, settings: dict[str, Any]) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('fsrs', ?)", (json.dumps(settings),))

    @_reading
    def last_wrong_response(self, question_id: str) -> Any:
        """The learner's most recent wrong response to the question (the distractor they fell
        for), or None."""
        rows = self._rows(
            "SELECT response FROM answers WHERE question_id = ? AND correct = 0 ORDER BY id DESC LIMIT 1",
            (question_id,))
        return json.loads(rows[0][0]) if rows else None

    @_reading
    def missed_last_time(self) -> list[str]:
        """Questions whose most recent answer was wrong, most recent first."""
        rows = self._rows(
            "SELECT question_id, correct FROM answers a WHERE id = "
            "(SELECT MAX(id) FROM answers b WHERE b.question_id = a.question_id) ORDER BY id DESC")
        return [r[0] for r in rows if not r[1]]

    @_reading
    def cards(self) -> dict[str, Any]:
        from fsrs import Card

        return {qid: Card.from_json(text) for qid, text in self._rows("SELECT question_id, card FROM cards")}

    @_reading
    def card(self, question_id: str) -> Any | None:
        """The question's FSRS card, or None before its first answer."""
        from fsrs import Card

        rows = self._rows("SELECT card FROM cards WHERE question_id = ?", (question_id,))
        return Card.from_json(rows[0][0]) if rows else None

    @_reading
    def due(self, now: datetime) -> list[str]:
        rows = self._rows("SELECT question_id FROM cards WHERE due <= ? ORDER BY due", (now.timestamp(),))
        return [r[0] for r in rows]

    # ------------------------------------------------------------------------- stats

    @_reading
    def activity(self) -> dict[date, int]:
        """Answers given per local calendar day."""
        result: dict[date, int] = {}
        for (at,) in self._rows("SELECT answered_at FROM answers"):
            day = datetime.fromtimestamp(at).date()
            result[day] = result.get(day, 0) + 1
        return result

    @_reading
    def totals(self) -> tuple[int, int]:
        row = self._rows("SELECT COUNT(*), COALESCE(SUM(correct), 0) FROM answers")[0]
        return int(row[0]), int(row[1])


# ----------------------------------------------------------------------------- damage


def damage(path: Path, check_wal: bool = True) -> str | None:
    """What is wrong with the progress file at ``path`` (None when it is sound or absent).
    ``check_wal``: also read the write-ahead log, which is only sound when no process writes it."""
    problem = _damage(path, check_wal)
    if problem is None:
        return None
    # SQLite's findings may quote the junk itself.
    return "".join(c if c.isprintable() else "?" for c in problem)[:300]


def _damage(path: Path, check_wal: bool) -> str | None:
    wal = Path(f"{path}-wal")
    try:
        if not path.exists():
            return "its write-ahead log is left without it" if wal.is_file() and wal.stat().st_size else None
        if path.stat().st_size == 0 and not (wal.is_file() and wal.stat().st_size):
            return "the file is empty"
        if check_wal and wal.is_file():
            problem = wal_damage(wal.read_bytes())
            if problem is not None:
                return f"{wal.name}: {problem}"
    except OSError as error:
        return f"cannot read it: {error}"
    try:
        # Read-only: a damaged file and its log stay exactly as they are until the user decides.
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as error:
        return str(error)
    try:
        return _structure_damage(db) or _content_damage(db)
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            return None  # busy, not damaged: the writer that holds it meets any damage itself
        return str(error)
    except sqlite3.DatabaseError as error:
        return str(error)
    except UnicodeDecodeError:
        # SQLite's own message quoted junk from the file (a damaged schema, say).
        return "database disk image is malformed (junk where SQLite expected text)"
    finally:
        db.close()


def _structure_damage(db: sqlite3.Connection) -> str | None:
    # Damage can put junk into the findings' text (a row's value): shown, not decoded strictly.
    db.text_factory = lambda raw: raw.decode("utf-8", "replace")
    findings = [str(row[0]).replace("\n", "; ") for row in db.execute("PRAGMA quick_check(3)")]
    db.text_factory = str
    if findings == ["ok"]:
        return None
    return "; ".join(line.replace("*** in database main ***; ", "")[:160] for line in findings)


# The columns the store reads back as JSON.
_JSON_COLUMNS = {"sessions": ("question_ids", "state", "summary"), "answers": ("response",), "cards": ("card",),
                 "settings": ("value",)}


def _content_damage(db: sqlite3.Connection) -> str | None:
    """quick_check proves the b-trees, not the values in them: junk inside a row's text would
    only surface later, as an error in use. Every row is read here as the store will read it
    (a few milliseconds for thousands of answers)."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table, columns in _JSON_COLUMNS.items():
        if table not in tables:
            continue  # a file from before that table: the store creates it
        try:
            # Every column (so every text value is decoded), the JSON ones parsed too.
            cursor = db.execute(f"SELECT rowid, {', '.join(columns)}, * FROM {table}")
            for row in cursor:
                for column, value in zip(columns, row[1:1 + len(columns)]):
                    if value is not None:
                        try:
                            json.loads(value)
                        except ValueError:
                            return f"row {row[0]} of table {table}: its {column} is not JSON any more"
        except sqlite3.OperationalError as error:
            if "decode" in str(error):
                return f"junk in a text value of table {table}"
            raise
    return None


_WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}
# An earlier generation of the log (the file is reused after a checkpoint) has a smaller salt-1:
# SQLite adds one to it at each restart.
_OLD_GENERATIONS = 1 << 16


def _wal_checksum(data: bytes, order: str, s1: int = 0, s2: int = 0) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s1 = (s1 + words[i] + s2) & 0xFFFFFFFF
        s2 = (s2 + words[i + 1] + s1) & 0xFFFFFFFF
    return s1, s2


def wal_damage(data: bytes) -> str | None:
    """Why SQLite would silently drop committed transactions from this write-ahead log (its
    format: https://www.sqlite.org/fileformat2.html#walformat), or None.

    SQLite replays frames up to the first one whose salt or checksum does not match, and treats
    the rest as a write that a crash cut short. That is right for the tail of the last transaction
    (or zeros, or an older generation of the log); it is damage when the rest holds frames that
    are not SQLite's at all, or a commit that chains correctly after a broken frame."""
    if len(data) <= 32:
        return None  # no frame: nothing committed can be lost
    header = data[:32]
    magic, version, page_size = struct.unpack(">III", header[:12])
    order = _WAL_MAGIC.get(magic)
    if order is None or version != 3007000 or page_size < 512 or page_size & (page_size - 1):
        return None if not data[32:].strip(b"\0") else "its header is not a SQLite log header"
    if _wal_checksum(header[:24], order) != struct.unpack(">II", header[24:32]):
        return None if not data[32:].strip(b"\0") else "its header's checksum does not match"
    salt = header[16:24]
    salt1 = struct.unpack(">I", salt[:4])[0]
    frame_size = 24 + page_size
    count = (len(data) - 32) // frame_size
    sums = _wal_checksum(header[:24], order)
    index = 0
    while index < count:  # the frames SQLite replays
        frame = data[32 + index * frame_size:32 + (index + 1) * frame_size]
        if frame[8:16] != salt:
            break
        frame_sums = _wal_checksum(frame[:8] + frame[24:], order, *sums)
        if frame_sums != struct.unpack(">II", frame[16:24]):
            break
        sums = frame_sums
        index += 1
    broken = index
    previous: bytes | None = None
    for index in range(broken, count):
        frame = data[32 + index * frame_size:32 + (index + 1) * frame_size]
        if not frame.strip(b"\0"):
            previous = None
            continue
        if frame[8:16] == salt:
            committed = struct.unpack(">I", frame[4:8])[0] != 0
            if committed and previous is not None and previous[8:16] == salt and index > broken:
                chained = _wal_checksum(frame[:8] + frame[24:], order, *struct.unpack(">II", previous[16:24]))
                if chained == struct.unpack(">II", frame[16:24]):
                    return (f"frame {broken + 1} is damaged and a transaction committed after it "
                            f"(frame {index + 1}) would be dropped")
        elif not 0 < (salt1 - struct.unpack(">I", frame[8:12])[0]) % (1 << 32) < _OLD_GENERATIONS:
            return f"frame {index + 1} is not a SQLite frame (its salt matches no generation of the log)"
        previous = frame
    return None


def set_aside(path: Path, now: float | None = None) -> Path:
    """Move the damaged file and its -wal and -shm to ``<name>.damaged-<UTC time>`` (the log keeps
    its suffix after that name, so the moved pair still opens together); returns the new path."""
    stamp = datetime.fromtimestamp(now if now is not None else time.time(), tz=timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    serial = 1
    while any(Path(f"{target}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        serial += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{serial}")
    try:
        for suffix in ("-wal", "-shm", ""):  # the main file last: its presence marks the set unmoved
            source = Path(f"{path}{suffix}")
            if source.exists():
                os.replace(source, f"{target}{suffix}")
    except OSError as error:
        raise ProgressError(f"cannot move the damaged {path} aside: {error}") from None
    return target


def _try_flock(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
