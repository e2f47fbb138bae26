"""What an attacker holding a copy of every file the server writes would do with them.

- :func:`wal_commits` parses ``FILE-wal`` (the SQLite WAL format: a 32-byte header, then frames
  of a 24-byte header and a page; a frame whose "database size" field is non-zero ends a commit)
  and :func:`replay` applies its commits one by one to the main file, yielding the database as it
  was after each commit, so :func:`linked_by_commits` can see which token hash vanished in the
  commit that added which response.
- :func:`added_by_commits` gives, per commit of the WAL, the responses it added, and
  :func:`shm_pages` the pages that ``FILE-shm``'s index lists for the WAL's frames: what a crash
  leaves (``tests/e2e/test_crash.py``).
- :func:`find_evidence` searches every file in a folder for client addresses (as text, and as
  the keyed hashes an attacker could compute from the secret on the disk), and for times finer
  than the day around the moments of the submissions (as text and as 8-byte numbers).

The tests run these attacks against a real ``deniable serve`` and require them to find nothing;
``tests/e2e/test_attacks.py`` also shows each finding something when its defence is off.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import sqlite3
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

WAL_HEADER = 32
FRAME_HEADER = 24


def wal_commits(wal: bytes) -> list[list[tuple[int, bytes]]]:
    """The committed transactions in a WAL, each a list of ``(page number, page bytes)``."""
    if len(wal) < WAL_HEADER:
        return []
    magic, _, page_size, _, salt1, salt2 = struct.unpack(">IIIIII", wal[:24])
    if magic not in (0x377F0682, 0x377F0683):
        return []
    commits, current, offset = [], [], WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal):
        page_no, db_size, s1, s2 = struct.unpack(">IIII", wal[offset:offset + 16])
        if (s1, s2) != (salt1, salt2):
            break  # frames of an earlier generation of the WAL
        current.append((page_no, wal[offset + FRAME_HEADER: offset + FRAME_HEADER + page_size]))
        if db_size:
            commits.append(current)
            current = []
        offset += FRAME_HEADER + page_size
    return commits


def replay(main: bytes, wal: bytes) -> Iterator[bytes]:
    """The main database file's bytes after each commit of the WAL, in order."""
    if len(wal) < WAL_HEADER:
        return
    page_size = struct.unpack(">I", wal[8:12])[0]
    image = bytearray(main)
    for commit in wal_commits(wal):
        for page_no, data in commit:
            start = (page_no - 1) * page_size
            if len(image) < start + page_size:
                image.extend(bytes(start + page_size - len(image)))
            image[start:start + page_size] = data
        yield bytes(image)


def _rows(image: bytes, sql: str, *, strict: bool = False) -> set:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "replayed.db"
        path.write_bytes(image)
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")
            return {row[0] for row in conn.execute(sql)}
        except sqlite3.DatabaseError:
            if strict:
                raise
            return set()
        finally:
            conn.close()


def copied(db: Path) -> tuple[bytes, bytes, bytes]:
    """The bytes of the database, its ``-wal`` and its ``-shm``, as a thief copying them would hold
    them (empty for a file that is not there)."""
    def read(path: Path) -> bytes:
        return path.read_bytes() if path.exists() else b""
    return db.read_bytes(), read(Path(f"{db}-wal")), read(Path(f"{db}-shm"))


def linked_by_commits(folder: Path, name: str = "deniable.db") -> list[tuple[set, set]]:
    """Replay the WAL: for every commit that both removed invitation hashes and added responses,
    ``(hashes removed, response ids added)`` — the linkage the attack is after."""
    main, wal, _ = copied(folder / name)
    before_tokens = _rows(main, "SELECT token_hash FROM invitations")
    before_responses = _rows(main, "SELECT id FROM responses")
    links = []
    for image in replay(main, wal):
        tokens, responses = _rows(image, "SELECT token_hash FROM invitations"), _rows(image, "SELECT id FROM responses")
        gone, added = before_tokens - tokens, responses - before_responses
        if gone and added:
            links.append((gone, added))
        before_tokens, before_responses = tokens, responses
    return links


def keyed_hashes(secret: bytes, address: str) -> list[bytes]:
    """What someone holding the secret key file could compute from a candidate address."""
    out = []
    for message in (address.encode(), f"address:{address}".encode()):
        digest = hmac.new(secret, message, hashlib.sha256)
        out += [digest.hexdigest()[:24].encode(), digest.hexdigest().encode(), digest.digest()[:8]]
    out += [hashlib.sha256(address.encode()).hexdigest().encode(), hashlib.blake2b(address.encode()).digest()[:8]]
    return out


def time_patterns(moment: float, slack: int = 90) -> list[bytes]:
    """Ways a time within ``slack`` seconds of ``moment`` could be written, finer than the day."""
    out = []
    for second in range(int(moment) - slack, int(moment) + slack + 1):
        out += [str(second).encode(), struct.pack("<d", float(second)), struct.pack(">d", float(second)),
                struct.pack("<q", second), struct.pack("<q", second * 1000)]
        when = datetime.datetime.fromtimestamp(second, datetime.timezone.utc)
        local = datetime.datetime.fromtimestamp(second)
        out += [when.strftime("%H:%M:%S").encode(), local.strftime("%H:%M:%S").encode()]
    minute = datetime.datetime.fromtimestamp(moment, datetime.timezone.utc)
    out += [minute.strftime("%Y-%m-%dT%H:%M").encode(), minute.strftime("%Y-%m-%d %H:%M").encode()]
    return out


def find_evidence(folder: Path, addresses: list[str], moments: list[float], secret: bytes | None) -> list[str]:
    """Every place in every file under ``folder`` that holds an address, a keyed hash of one, or a
    submission time finer than the day: ``["FILE: what"]`` (empty when the files are clean)."""
    found = []
    blobs = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    for path, data in blobs.items():
        for address in addresses:
            if address.encode() in data or re.search(re.escape(address).encode() + rb"(?!\d)", data):
                found.append(f"{path.name}: the address {address}")
            if secret is not None and any(h in data for h in keyed_hashes(secret, address)):
                found.append(f"{path.name}: a keyed hash of {address}")
        for moment in moments:
            if any(p in data for p in time_patterns(moment)):
                found.append(f"{path.name}: a time within 90 s of a submission")
                break
    return found


def added_by_commits(main: bytes, wal: bytes, sql: str = "SELECT id FROM responses") -> list[set | None]:
    """Replay the WAL over the main file: per commit, the keys ``sql`` finds that the commit added
    (empty for a commit that added none: a growth step, a scrub), or None where the image before or
    after it cannot be read (a checkpoint cut off by a kill leaves the main file alone inconsistent
    until the WAL's commits are applied)."""
    def rows(image):
        try:
            return _rows(image, sql, strict=True)
        except sqlite3.DatabaseError:
            return None

    before, added = rows(main), []
    for image in replay(main, wal):
        now = rows(image)
        added.append(None if before is None or now is None else now - before)
        before = now
    return added


SHM_HEADER = 136  # two copies of the 48-byte WAL-index header, then the 40 bytes of checkpoint info
SHM_FIRST_FRAMES = 4062  # the first block's page-number slots (32 KiB less the header, 4 bytes each)


def shm_pages(shm: bytes) -> list[int]:
    """The page numbers ``FILE-shm`` lists for the WAL's frames, in frame order, from the first block
    of its index (frames 1 to 4,062): what the index would tell an attacker about which pages the
    recent commits wrote, stale entries of an earlier WAL included (zero slots left out)."""
    if len(shm) < SHM_HEADER + 4 * SHM_FIRST_FRAMES:
        return []
    slots = struct.unpack(f"<{SHM_FIRST_FRAMES}I", shm[SHM_HEADER:SHM_HEADER + 4 * SHM_FIRST_FRAMES])
    return [page for page in slots if page]


def frames_held(wal: bytes) -> int:
    """The whole frames the WAL file holds, of any generation: every page number and page its bytes
    tell (a restart rewrites the header before it overwrites the frames behind it)."""
    if len(wal) < WAL_HEADER:
        return 0
    return (len(wal) - WAL_HEADER) // (FRAME_HEADER + struct.unpack(">I", wal[8:12])[0])


def wal_frames(wal: bytes) -> int:
    """The WAL's frames of its current generation (those with the header's salts), committed or not."""
    if len(wal) < WAL_HEADER:
        return 0
    page_size, salts = struct.unpack(">I", wal[8:12])[0], wal[16:24]
    frames, offset = 0, WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(wal) and wal[offset + 8:offset + 16] == salts:
        frames, offset = frames + 1, offset + FRAME_HEADER + page_size
    return frames
