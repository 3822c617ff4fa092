"""The index schema, one migration per change. Applied on open."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

migrations = Migrations("amem")


@migrations()
def m001_initial(db):
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE IF NOT EXISTS files (
            path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, hash TEXT,
            note_id TEXT, error TEXT
        );
        CREATE TABLE IF NOT EXISTS notes (
            id TEXT PRIMARY KEY, path TEXT NOT NULL, content TEXT NOT NULL, context TEXT,
            keywords TEXT, tags TEXT, links TEXT, backlinks TEXT, boxes TEXT,
            metadata TEXT, extra TEXT, created TEXT, updated TEXT, created_utc TEXT,
            text_hash TEXT, embedded_hash TEXT, previous TEXT, next TEXT, speaker TEXT
        );
        CREATE INDEX IF NOT EXISTS notes_speaker ON notes(speaker);
        CREATE INDEX IF NOT EXISTS notes_created ON notes(created_utc);
        CREATE TABLE IF NOT EXISTS note_keywords (note_id TEXT, keyword TEXT, PRIMARY KEY (note_id, keyword));
        CREATE INDEX IF NOT EXISTS note_keywords_kw ON note_keywords(keyword);
        CREATE TABLE IF NOT EXISTS note_tags (note_id TEXT, tag TEXT, PRIMARY KEY (note_id, tag));
        CREATE INDEX IF NOT EXISTS note_tags_tag ON note_tags(tag);
        CREATE TABLE IF NOT EXISTS note_boxes (note_id TEXT, box TEXT, PRIMARY KEY (note_id, box));
        CREATE INDEX IF NOT EXISTS note_boxes_box ON note_boxes(box);
        CREATE TABLE IF NOT EXISTS links (src TEXT, dst TEXT, kind TEXT, PRIMARY KEY (src, dst, kind));
        CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
        CREATE TABLE IF NOT EXISTS vector_deletes (id TEXT PRIMARY KEY);
        -- `neighbours` holds the text of the notes just before and after (a reply such as
        -- "Yes, last Tuesday!" means little alone); `dates` the created date in words.
        CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
            id UNINDEXED, content, keywords, tags, context, neighbours, dates,
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        -- unicode61 does not split CJK text; trigrams find it (queries of 3+ characters).
        CREATE VIRTUAL TABLE IF NOT EXISTS notes_trigram USING fts5(
            id UNINDEXED, content, tokenize = 'trigram'
        );
        """
    )


@migrations()
def m002_revisions(db):
    # Evolution's changes to notes: the file before (byte for byte, for `amem undo`) and
    # the hash of the file amem wrote (undo refuses once a person has changed it since).
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS revisions (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, note_id TEXT NOT NULL, cause TEXT,
            model TEXT, at TEXT NOT NULL, old_context TEXT, new_context TEXT,
            old_tags TEXT, new_tags TEXT, old_bytes BLOB NOT NULL, new_hash TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS revisions_note ON revisions(note_id, seq);
        """
    )


@migrations()
def m003_fts_keys(db):
    # The full-text tables' `id` column is UNINDEXED: finding a row by it reads the whole
    # table (10 ms a lookup at 10,000 notes). Each note gets a fixed rowid in both instead.
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS fts_keys (id TEXT PRIMARY KEY, key INTEGER NOT NULL UNIQUE);
        INSERT OR IGNORE INTO fts_keys(id, key) SELECT id, rowid FROM notes_fts;
        DELETE FROM notes_trigram;
        INSERT INTO notes_trigram(rowid, id, content)
            SELECT k.key, n.id, n.content FROM notes n JOIN fts_keys k ON k.id = n.id;
        """
    )


@migrations()
def m004_jobs(db):
    # Deferred pipeline work (`amem add --defer`), worked by `amem process` in order.
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS jobs (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, note_id TEXT NOT NULL UNIQUE, queued TEXT NOT NULL
        );
        """
    )


@migrations()
def m005_pending_embeddings(db):
    # Every semantic search asks which notes still need a vector: without this partial
    # index that read the whole notes table (~10 ms at 10,000 notes).
    db.executescript(
        """
        CREATE INDEX IF NOT EXISTS notes_unembedded ON notes(id)
            WHERE embedded_hash IS NULL OR embedded_hash != text_hash;
        """
    )


@migrations()
def m006_job_claims(db):
    # Several workers (the warm server's, the MCP server's, `amem process`) share one
    # queue: a worker claims a job before doing it, for a lease, so no job is done twice
    # and a killed worker's job goes to the next one (`claimed_by`: host:pid:thread).
    db.executescript(
        """
        ALTER TABLE jobs ADD COLUMN claimed_by TEXT;
        ALTER TABLE jobs ADD COLUMN lease_until REAL;
        """
    )


@migrations()
def m007_own_words_vectors(db):
    # A note a model wrote fields of gets a second vector, of the note without them
    # (`Indexer._texts`): embed those notes again so they have it.
    db.execute(
        """
        UPDATE notes SET embedded_hash = NULL
        WHERE json_valid(metadata) AND json_array_length(metadata, '$.amem_generated') > 0
        """
    )


@migrations()
def m008_link_names(db):
    # Links name notes the way people write them (`[[Project Plan]]`, `[[x#heading]]`, a
    # file name, a title: see `amem_cli.links`). `note_names` holds every name of every
    # note; a link row holds what it names (`key`, as compared; `target`, as written) and
    # the note that resolves to (`dst`, NULL while none does). `kind`: `link` (in the
    # frontmatter), `text` (in the note's text), `previous` or `next`. Rebuilt from the
    # notes already indexed, so no file is read again.
    for sql in (
        "DROP TABLE IF EXISTS links",
        "CREATE TABLE links (src TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL, dst TEXT, "
        "PRIMARY KEY (src, key, kind))",
        "CREATE INDEX links_dst ON links(dst)",
        "CREATE INDEX links_key ON links(key)",
        "CREATE TABLE note_names (name TEXT NOT NULL, rank INTEGER NOT NULL, note_id TEXT NOT NULL, PRIMARY KEY (name, note_id))",
        "CREATE INDEX note_names_note ON note_names(note_id)",
    ):
        db.execute(sql)
    from .links import index_links  # here: the stores import this module (through `connection`)
    from .notes import NOTE_COLS, note_from_row

    for row in db.execute(f"SELECT path, {NOTE_COLS} FROM notes").fetchall():
        index_links(db, note_from_row(row[1:]), row[0])


@migrations()
def m009_job_failures_and_times(db):
    # The queue says what went wrong and how long its work takes: a job whose model work
    # failed keeps its count of failures and the last error (`amem queue` shows them, and a
    # failing job goes behind the others); `job_times` keeps how long the last jobs took,
    # for `amem status` to estimate the time the queue has left.
    db.executescript(
        """
        ALTER TABLE jobs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE jobs ADD COLUMN error TEXT;
        CREATE TABLE IF NOT EXISTS job_times (seq INTEGER PRIMARY KEY AUTOINCREMENT, finished REAL NOT NULL,
                                              seconds REAL NOT NULL);
        """
    )


@migrations()
def m010_own_words(db):
    # The full-text row of a note a model wrote fields of holds the deterministic
    # method's version of those fields (`NoteStore.mark_embedded`), made with its
    # vectors: embed those notes again so they have it.
    db.execute("ALTER TABLE notes ADD COLUMN own_words TEXT")
    db.execute(
        """
        UPDATE notes SET embedded_hash = NULL
        WHERE json_valid(metadata) AND json_array_length(metadata, '$.amem_generated') > 0
        """
    )


@migrations()
def m011_stated_times(db):
    # The times a note's text states ("yesterday", "last Tuesday", "8 May 2023"), resolved
    # against its date (`amem_cli.time_phrases`), in words: derived from the note, kept
    # in the index only; a question about time favours the notes that state one.
    from ..time_phrases import stated_words
    from ..timeutil import to_datetime

    db.execute("ALTER TABLE notes ADD COLUMN stated TEXT NOT NULL DEFAULT ''")
    for note_id, content, created in db.execute("SELECT id, content, created FROM notes").fetchall():
        if stated := stated_words(content, to_datetime(created) if created else None):
            db.execute("UPDATE notes SET stated = ? WHERE id = ?", [stated, note_id])


@migrations()
def m012_passages(db):
    # A note longer than the embedder's window is embedded as passages (`retrieve.fields.embedding_texts`):
    # embed the long notes again so their later passages get vectors.
    from ..text import passages

    long = [(i,) for i, content in db.execute("SELECT id, content FROM notes").fetchall() if len(passages(content)) > 1]
    db.conn.executemany("UPDATE notes SET embedded_hash = NULL WHERE id = ?", long)


@migrations()
def m013_chat_roles(db):
    # A chat turn's role ("user: ...", or `role` in its metadata) is its speaker, where
    # nothing else named one (`retrieve.fields.speaker_of`): a question asks about one
    # side of a chat (`retrieve.query.side_asked`).
    import json

    from ..text import chat_role

    rows = db.execute("SELECT id, content, metadata FROM notes WHERE speaker IS NULL").fetchall()
    found = []
    for note_id, content, metadata in rows:
        role = json.loads(metadata or "{}").get("role")
        role = role.strip() if isinstance(role, str) and role.strip() else chat_role(content)
        if role:
            found.append((role, note_id))
    db.conn.executemany("UPDATE notes SET speaker = ? WHERE id = ?", found)


@migrations()
def m014_supersession_expiry_duplicates(db):
    # A note's `supersedes` and `superseded_by` (links of those kinds in `links.kind`) and
    # when it stops being true (`expires`; `expires_utc` for comparing); its text as
    # compared for exact duplicates (`content_key`: whitespace aside); what a revision
    # changed beyond context and tags (`change`: a supersession made or undone); and the
    # pairs the supersession detector was unsure of, for `amem supersede --suggest`
    # (hints, kept in the index only: a reindex finds them no more).
    # Filled from the notes already indexed (keys a person wrote before amem knew them
    # were kept with the other keys it did not know), so no file is read again.
    import json

    from ..markdown import link_list
    from ..timeutil import to_datetime, utc_key
    from .links import index_links  # here: the stores import this module (through `connection`)
    from .notes import ALL_NOTE_COLS, NOTE_COLS, content_key, note_from_row

    db.executescript(
        """
        ALTER TABLE notes ADD COLUMN supersedes TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE notes ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE notes ADD COLUMN expires TEXT;
        ALTER TABLE notes ADD COLUMN expires_utc TEXT;
        ALTER TABLE notes ADD COLUMN content_key TEXT;
        CREATE INDEX IF NOT EXISTS notes_expires ON notes(expires_utc) WHERE expires_utc IS NOT NULL;
        CREATE INDEX IF NOT EXISTS notes_content_key ON notes(content_key);
        ALTER TABLE revisions ADD COLUMN change TEXT;
        CREATE TABLE IF NOT EXISTS suggestions (new TEXT NOT NULL, old TEXT NOT NULL, reason TEXT NOT NULL,
                                                PRIMARY KEY (new, old));
        CREATE INDEX IF NOT EXISTS suggestions_old ON suggestions(old);
        """
    )
    for row in db.execute(f"SELECT path, {NOTE_COLS} FROM notes").fetchall():
        note = note_from_row(row[1:])
        extra = dict(note.extra)
        try:
            supersedes = link_list(extra.pop("supersedes", None), "supersedes")
            superseded_by = link_list(extra.pop("superseded_by", None), "superseded_by")
            expires = to_datetime(extra.pop("expires")) if extra.get("expires") else None
        except Exception:  # not readable as these keys: left as they were (a reindex says why)
            supersedes, superseded_by, expires, extra = [], [], None, note.extra
        db.execute(
            "UPDATE notes SET content_key = ?, supersedes = ?, superseded_by = ?, expires = ?, expires_utc = ?, extra = ? "
            "WHERE id = ?",
            [content_key(note.content), json.dumps(supersedes, ensure_ascii=False), json.dumps(superseded_by, ensure_ascii=False),
             expires.isoformat() if expires else None, utc_key(expires), json.dumps(extra, ensure_ascii=False, default=str),
             note.id],
        )
        if supersedes or superseded_by:
            full = db.execute(f"SELECT {ALL_NOTE_COLS} FROM notes WHERE id = ?", [note.id]).fetchone()
            index_links(db, note_from_row(full), row[0])
