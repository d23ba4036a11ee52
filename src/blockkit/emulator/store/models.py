"""Queries for models, model versions, files, hashes, preview images and permissions.

Every function takes the connection (``store.read()``/``write()``) and returns plain
tuples or small records; the catalogue service shapes them. A page of models is
read in a fixed number of queries whatever its size: the page's ids (one query),
then the models, their tags, versions, files, hashes and preview images, each with
one ``IN (...)`` query over the ids of the step before (no query per model).

Visibility rules that are SQL live here as named fragments, so the list, the
single model and the version routes apply the same ones.
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any

# --- visibility ----------------------------------------------------------------------------

# A model anyone may see: published (moderated models stay listed: mode drops parts of them).
MODEL_VISIBLE = "m.status = 'Published' AND m.availability <> 'Private'"
# ... and that lists may show (Unsearchable models are reachable by id only).
MODEL_LISTED = MODEL_VISIBLE + " AND m.availability <> 'Unsearchable'"
# A version the public sees in a model: published, and not a Private training result.
VERSION_PUBLISHED = "v.status = 'Published' AND v.availability <> 'Private'"
# Preview images: rated and scanned stills and videos of the model owner's published,
# unblocked, scanned, non-private posts about the version, in post order.
PREVIEW_TYPES = ("image", "video")
PREVIEWS_PER_VERSION = 20


def _marks(values: Sized) -> str:
    return ",".join("?" * len(values))


# --- derived columns -------------------------------------------------------------------------

# models.published_version_count and models.image_count counted from scratch, for every model:
# what migration 0009 fills and its triggers keep (the same conditions; see that file).
COUNT_MODELS_SQL = (
    "UPDATE models SET"
    " published_version_count = (SELECT count(*) FROM model_versions v WHERE v.model_id = models.id"
    " AND v.status = 'Published' AND v.availability <> 'Private'),"
    " image_count = (SELECT count(*) FROM model_versions iv JOIN posts ip ON ip.model_version_id = iv.id"
    " JOIN images ii ON ii.post_id = ip.id WHERE iv.model_id = models.id AND iv.status = 'Published'"
    " AND ip.user_id = models.user_id AND ip.published_at IS NOT NULL AND ip.blocked = 0 AND ip.scanned = 1"
    " AND ip.availability <> 'Private' AND ii.scanned_at IS NOT NULL AND ii.nsfw_level <> 0)")


def count_models(db: sqlite3.Connection) -> None:
    """Fill every model's derived counts (after a bulk insert made with the triggers dropped)."""
    db.execute(COUNT_MODELS_SQL)


# --- sorting ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SortSpec:
    """How a sort orders models: an SQL value (over mm = the period's metrics, m = models) and a direction."""

    value: str
    descending: bool = True
    numeric: bool = True
    uses_metrics: bool = True
    index: str = ""  # the index that holds the models in this order (store/indexes/models.sql)


# The sort values of GET /models. Highest Rated is the net rating (thumbs up minus down),
# Most Liked the thumbs up alone; Newest and Oldest read the publication date and no metrics.
SORTS: dict[str, SortSpec] = {
    # net_rating: thumbs up - down, a generated column (migration 0009).
    "Highest Rated": SortSpec("mm.net_rating", index="model_metrics_net_rating"),
    "Most Downloaded": SortSpec("mm.download_count", index="model_metrics_downloads"),
    "Most Liked": SortSpec("mm.thumbs_up_count", index="model_metrics_period"),
    "Most Discussed": SortSpec("mm.comment_count", index="model_metrics_comments"),
    "Most Collected": SortSpec("mm.collected_count", index="model_metrics_collected"),
    # models.image_count: kept exact by the triggers of migration 0009 (what it counts is there).
    "Most Images": SortSpec("m.image_count", uses_metrics=False, index="models_image_count"),
    # published_sort: coalesce(published_at, ''), a generated column (migration 0009).
    "Newest": SortSpec("m.published_sort", numeric=False, uses_metrics=False, index="models_published_sort"),
    "Oldest": SortSpec("m.published_sort", descending=False, numeric=False, uses_metrics=False,
                      index="models_published_sort"),
}


@dataclass
class ModelFilter:
    """The filters of GET /models, resolved to ids and values the SQL takes."""

    period: str = "AllTime"
    ids: Sequence[int] | None = None
    tag_id: int | None = None
    user_ids: Sequence[int] | None = None
    types: Sequence[str] | None = None
    base_models: Sequence[str] | None = None
    checkpoint_type: str | None = None
    supports_generation: bool | None = None
    from_platform: bool | None = None
    early_access: bool | None = None          # a version in active early access
    now: str = ""                              # for early access
    terms: Sequence[str] = ()                  # query: every term in the name
    browsing_level: int = 1
    favorites_of: int | None = None
    hidden_of: int | None = None               # only the caller's hidden models
    not_hidden_of: int | None = None           # leave the caller's hidden models out
    extra: list[str] = field(default_factory=list)


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass
class _Term:
    """One condition of the list. ``lead`` names a condition that can lead the read (it has an
    index, and ``count_sql`` counts at most ``?`` of the models it lets through); written with
    ``{plus}`` before the column, which becomes '+' (no index) unless the plan leads with it."""

    sql: str
    args: list[Any]
    lead: bool = False
    count_sql: str = ""
    ids_sql: str = ""  # instead of count_sql: the ids themselves (at most ``?``), which then lead
    ids: list[int] | None = None

    def text(self, leading: bool) -> str:
        if leading and self.ids is not None:
            return "m.id IN (SELECT value FROM json_each(?))"
        return self.sql.replace("{plus}", "" if leading else "+")

    def values(self, leading: bool) -> list[Any]:
        if leading and self.ids is not None:
            import orjson

            return [orjson.dumps(self.ids).decode()]
        return self.args


def _terms(f: ModelFilter) -> list[_Term]:
    # published_version_count: the model's versions with VERSION_PUBLISHED (migration 0009's triggers).
    terms = [_Term(MODEL_LISTED, []), _Term("m.published_version_count > 0", [])]
    # Maturity: the model shares a level with the caller's, and a model flagged NSFW needs a
    # level above PG-13 (R, X or XXX).
    terms.append(_Term("(m.nsfw_level & ?) <> 0", [f.browsing_level]))
    if not f.browsing_level & 28:
        terms.append(_Term("m.nsfw = 0", []))
    if f.ids is not None:
        terms.append(_Term(f"{{plus}}m.id IN ({_marks(f.ids)})", list(f.ids), True,
                           f"SELECT count(*) FROM (SELECT 1 FROM models WHERE id IN ({_marks(f.ids)}) LIMIT ?)"))
    if f.tag_id is not None:
        terms.append(_Term("{plus}m.id IN (SELECT mt.model_id FROM model_tags mt WHERE mt.tag_id = ?)", [f.tag_id], True,
                           "SELECT count(*) FROM (SELECT 1 FROM model_tags WHERE tag_id = ? LIMIT ?)"))
    if f.user_ids is not None:
        terms.append(_Term(f"{{plus}}m.user_id IN ({_marks(f.user_ids)})", list(f.user_ids), True,
                           f"SELECT count(*) FROM (SELECT 1 FROM models WHERE user_id IN ({_marks(f.user_ids)}) LIMIT ?)"))
    if f.types:
        terms.append(_Term(f"{{plus}}m.type IN ({_marks(f.types)})", list(f.types), True,
                           f"SELECT count(*) FROM (SELECT 1 FROM models WHERE type IN ({_marks(f.types)}) LIMIT ?)"))
    if f.base_models:
        versions = (f"SELECT v.model_id FROM model_versions v WHERE v.base_model IN ({_marks(f.base_models)})"
                    f" AND {VERSION_PUBLISHED}")
        terms.append(_Term(f"{{plus}}m.id IN ({versions})", list(f.base_models), True,
                           f"SELECT count(*) FROM (SELECT DISTINCT {versions[7:]} LIMIT ?)"))  # models, not versions
    if f.checkpoint_type is not None:
        terms.append(_Term("m.type = 'Checkpoint' AND {plus}m.checkpoint_type = ?", [f.checkpoint_type], True,
                           "SELECT count(*) FROM (SELECT 1 FROM models WHERE checkpoint_type = ? AND type = 'Checkpoint'"
                           " LIMIT ?)"))
    if f.supports_generation is not None:
        terms.append(_Term("m.supports_generation = ?", [int(f.supports_generation)]))
    if f.from_platform is not None:
        terms.append(_Term("m.from_platform = ?", [int(f.from_platform)]))
    if f.early_access:
        early = ("SELECT v.model_id FROM model_versions v WHERE v.availability = 'EarlyAccess'"
                 f" AND v.early_access_ends_at > ? AND {VERSION_PUBLISHED}")
        terms.append(_Term(f"{{plus}}m.id IN ({early})", [f.now], True, f"SELECT count(*) FROM ({early} LIMIT ?)"))
    elif f.early_access is not None:
        terms.append(_Term(f"NOT EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND {VERSION_PUBLISHED}"
                           " AND v.availability = 'EarlyAccess' AND v.early_access_ends_at > ?)", [f.now]))
    if f.terms:
        # Every term in the name. To lead, the matching ids are read from models_name (a covering
        # index: one scan of the names, not of the table) and kept.
        likes = [_like(term) for term in f.terms]
        test = " AND ".join("{col} LIKE ? ESCAPE '\\'" for _ in likes)
        terms.append(_Term(test.replace("{col}", "m.name"), likes, True,
                           ids_sql=f"SELECT n.id FROM models n INDEXED BY models_name WHERE"
                                   f" {test.replace('{col}', 'n.name')} LIMIT ?"))
    if f.favorites_of is not None:
        favorites = ("SELECT ci.model_id FROM collections c JOIN collection_items ci ON ci.collection_id = c.id"
                     " WHERE c.user_id = ? AND c.mode = 'Bookmark' AND ci.kind = 'model' AND ci.status = 'ACCEPTED'")
        terms.append(_Term(f"{{plus}}m.id IN ({favorites})", [f.favorites_of], True,
                           f"SELECT count(*) FROM ({favorites} LIMIT ?)"))
    if f.hidden_of is not None:
        hidden = "SELECT model_id FROM hidden_models WHERE user_id = ?"
        terms.append(_Term(f"{{plus}}m.id IN ({hidden})", [f.hidden_of], True, f"SELECT count(*) FROM ({hidden} LIMIT ?)"))
    if f.not_hidden_of is not None:
        terms.append(_Term("m.id NOT IN (SELECT model_id FROM hidden_models WHERE user_id = ?)", [f.not_hidden_of]))
    return terms


# How a page is read. A page either walks the sort's index from the cursor, testing each model
# against the filters until it has the page (cost: about limit / the share of models that pass),
# or reads the models one filter lets through (through that filter's index) and sorts them
# (cost: about the number of those models). With N models and a page of n, the walk wins while
# the filter lets through more than about sqrt(n * N) models, times LEAD_FACTOR for the walk's
# extra rows (it also passes models the listing or the browsing level leave out; on the large
# seed 1.5 put LORA (4,463 models) and Checkpoint (1,874) on the walk, a 1,000-model tag or
# query term on the lead, where each was faster). The counts that decide stop at the bound
# (LIMIT), so deciding costs at most one short index range per filter (a query's terms: one
# scan of the names index, whose matches then lead).
LEAD_FACTOR = 1.5


def list_model_ids(db: sqlite3.Connection, f: ModelFilter, sort: str, *, limit: int, offset: int = 0,
                   after: tuple[Any, int] | None = None) -> list[tuple[int, Any]]:
    """(id, sort value) of the models on one page: ``limit`` rows from ``offset``, or after a keyset cursor."""
    spec = SORTS[sort]
    terms = _terms(f)
    direction = "DESC" if spec.descending else "ASC"
    op = "<" if spec.descending else ">"
    id_column = "mm.model_id" if spec.uses_metrics else "m.id"  # the sort indexes end with it
    need = offset + limit

    lead: _Term | None = None
    candidates = [t for t in terms if t.lead]
    if candidates:
        total = int(db.execute("SELECT max(id) FROM models").fetchone()[0] or 0)  # N, near enough
        bound = max(1, int(LEAD_FACTOR * math.sqrt(need * max(total, 1))))
        best = bound + 1
        for term in candidates:
            if term.ids_sql:
                term.ids = [r[0] for r in db.execute(term.ids_sql, [*term.args, bound + 1])]
                count = len(term.ids)
            else:
                count = int(db.execute(term.count_sql, [*term.args, bound + 1]).fetchone()[0])
            if count < best:
                lead, best = term, count
    where = [t.text(t is lead) for t in terms]
    args = [a for t in terms for a in t.values(t is lead)]

    if lead is None:
        # Walk the sort's index (named, so that the planner does not sort a scan instead) from
        # the cursor: a row value, so that the walk starts at the cursor even inside a run of
        # equal values.
        if spec.uses_metrics:
            source = f"model_metrics mm INDEXED BY {spec.index} CROSS JOIN models m ON m.id = mm.model_id"
            where.insert(0, "mm.period = ?")
            args.insert(0, f.period)
        else:
            source = f"models m INDEXED BY {spec.index}"
        if after is not None:
            where.append(f"({spec.value}, {id_column}) {op} (?, ?)")
            args.extend([after[0], after[1]])
        order = f"{spec.value} {direction}, {id_column} {direction}"
    else:
        # Read the models the lead filter lets through, then sort them ('+': no index for the
        # order or the cursor, which would turn this back into a walk).
        if spec.uses_metrics:
            source = "models m CROSS JOIN model_metrics mm ON mm.model_id = m.id AND mm.period = ?"
            args.insert(0, f.period)
        else:
            source = "models m"
        if after is not None:
            where.append(f"(+{spec.value}, +{id_column}) {op} (?, ?)")
            args.extend([after[0], after[1]])
        order = f"+{spec.value} {direction}, +{id_column} {direction}"
    sql = f"SELECT {id_column}, {spec.value} FROM {source} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ? OFFSET ?"
    return [(r[0], r[1]) for r in db.execute(sql, [*args, limit, offset])]


# --- rows --------------------------------------------------------------------------------------

MODEL_COLUMNS = ("m.id, m.name, m.description, m.type, m.nsfw, m.nsfw_level, m.availability, m.supports_generation,"
                 " m.allow_no_credit, m.allow_commercial_use, m.allow_derivatives, m.allow_different_license,"
                 " m.minor, m.poi, m.sfw_only, m.mode, m.user_id, u.username, u.image,"
                 " coalesce(mm.download_count, 0), coalesce(mm.thumbs_up_count, 0),"
                 " coalesce(mm.thumbs_down_count, 0), coalesce(mm.comment_count, 0),"
                 " coalesce(mm.tipped_amount_count, 0), m.status")


def models_by_ids(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Model rows (MODEL_COLUMNS, with the creator and the all-time stats) by id. No visibility filter."""
    if not ids:
        return {}
    rows = db.execute(
        f"SELECT {MODEL_COLUMNS} FROM models m JOIN users u ON u.id = m.user_id"
        f" LEFT JOIN model_metrics mm ON mm.model_id = m.id AND mm.period = 'AllTime'"
        f" WHERE m.id IN ({_marks(ids)})", list(ids))
    return {r[0]: tuple(r) for r in rows}


def visible_model(db: sqlite3.Connection, model_id: int) -> bool:
    return db.execute(f"SELECT 1 FROM models m WHERE m.id = ? AND {MODEL_VISIBLE}", (model_id,)).fetchone() is not None


def tags_of_models(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    if not ids:
        return out
    for model_id, name in db.execute(
            f"SELECT mt.model_id, t.name FROM model_tags mt JOIN tags t ON t.id = mt.tag_id"
            f" WHERE mt.model_id IN ({_marks(ids)}) ORDER BY mt.model_id, t.name", list(ids)):
        out.setdefault(model_id, []).append(name)
    return out


LIST_VERSION_COLUMNS = ("v.id, v.model_id, v.name, v.base_model, v.base_model_type, v.published_at,"
                        " v.supports_generation, v.download_count, v.thumbs_up_count, v.thumbs_down_count,"
                        " v.position, v.availability, v.nsfw_level, v.description, v.trained_words,"
                        " v.early_access_ends_at, v.created_at, v.status")


def versions_of_models(db: sqlite3.Connection, ids: Sequence[int], *, published_only: bool) -> list[tuple[Any, ...]]:
    """The versions of these models, newest first (LIST_VERSION_COLUMNS)."""
    if not ids:
        return []
    where = f"v.model_id IN ({_marks(ids)})" + (f" AND {VERSION_PUBLISHED}" if published_only else "")
    return [tuple(r) for r in db.execute(
        f"SELECT {LIST_VERSION_COLUMNS} FROM model_versions v WHERE {where} ORDER BY v.model_id, v.position",
        list(ids))]


FILE_COLUMNS = ("f.id, f.version_id, f.name, f.type, f.size_kb, f.format, f.size, f.fp, f.is_primary,"
                " f.pickle_scan_result, f.virus_scan_result, f.visibility, f.epoch, f.scanned_at")


def files_of_versions(db: sqlite3.Connection, version_ids: Sequence[int], *, public_only: bool,
                      primary_only: bool = False) -> list[tuple[Any, ...]]:
    """Files (FILE_COLUMNS) of these versions: primary first, then by id."""
    if not version_ids:
        return []
    where = f"f.version_id IN ({_marks(version_ids)})"
    if public_only:
        where += " AND f.visibility = 'Public'"
    if primary_only:
        where += " AND f.is_primary = 1"
    return [tuple(r) for r in db.execute(
        f"SELECT {FILE_COLUMNS} FROM model_files f WHERE {where} ORDER BY f.version_id, f.is_primary DESC, f.id",
        list(version_ids))]


HASH_ORDER = ("AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3")


def hashes_of_files(db: sqlite3.Connection, file_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    if not file_ids:
        return out
    for file_id, kind, value in db.execute(
            f"SELECT file_id, kind, hash FROM file_hashes WHERE file_id IN ({_marks(file_ids)})", list(file_ids)):
        out.setdefault(file_id, {})[kind] = value
    return {k: {kind: v[kind] for kind in HASH_ORDER if kind in v} for k, v in out.items()}


PREVIEW_COLUMNS = ("id, url, nsfw_level, width, height, blurhash, type, version_id, has_meta, has_prompt,"
                   " post_availability, meta, duration")


def previews_of_versions(db: sqlite3.Connection, version_ids: Sequence[int], browsing_level: int,
                         per_version: int = PREVIEWS_PER_VERSION) -> list[tuple[Any, ...]]:
    """Preview images (PREVIEW_COLUMNS) of these versions within ``browsing_level``, at most ``per_version`` each."""
    if not version_ids or not browsing_level:
        return []
    return [tuple(r) for r in db.execute(
        f"SELECT {PREVIEW_COLUMNS} FROM ("
        f" SELECT i.id, i.url, i.nsfw_level, i.width, i.height, i.blurhash, i.type, p.model_version_id AS version_id,"
        f"  i.meta IS NOT NULL AS has_meta,"
        f"  coalesce(json_extract(i.meta, '$.prompt'), '') <> '' AS has_prompt, p.availability AS post_availability,"
        f"  i.meta, i.duration,"
        f"  row_number() OVER (PARTITION BY p.model_version_id ORDER BY p.id, i.post_position, i.id) AS rank"
        f" FROM posts p JOIN model_versions v ON v.id = p.model_version_id JOIN models m ON m.id = v.model_id"
        f" JOIN images i ON i.post_id = p.id"
        f" WHERE p.model_version_id IN ({_marks(version_ids)}) AND p.user_id = m.user_id"
        f" AND p.published_at IS NOT NULL AND p.blocked = 0 AND p.scanned = 1 AND p.availability <> 'Private'"
        f" AND i.scanned_at IS NOT NULL AND (i.nsfw_level & ?) <> 0 AND i.type IN ('image', 'video')"
        f") WHERE rank <= ? ORDER BY version_id, rank",
        [*version_ids, browsing_level, per_version])]


# --- single versions -----------------------------------------------------------------------------

DETAIL_VERSION_COLUMNS = (
    "v.id, v.model_id, v.name, v.description, v.base_model, v.base_model_type, v.air_ecosystem, v.air_type,"
    " v.air_source, v.status, v.availability, v.nsfw_level, v.created_at, v.updated_at, v.published_at,"
    " v.upload_type, v.usage_control, v.trained_words, v.early_access_config, v.early_access_ends_at,"
    " v.training_status, v.training_details, v.download_count, v.thumbs_up_count, v.require_auth,"
    " v.free_trial_limit, v.additional_resource_charge, v.is_featured, v.supports_generation,"
    " m.name, m.type, m.nsfw, m.poi, m.mode, m.user_id, m.status, m.availability, m.minor, m.sfw_only")


@dataclass(frozen=True, slots=True)
class VersionRow:
    id: int
    model_id: int
    name: str
    description: str | None
    base_model: str
    base_model_type: str | None
    air_ecosystem: str
    air_type: str
    air_source: str
    status: str
    availability: str
    nsfw_level: int
    created_at: str
    updated_at: str
    published_at: str | None
    upload_type: str
    usage_control: str
    trained_words: str
    early_access_config: str | None
    early_access_ends_at: str | None
    training_status: str | None
    training_details: str | None
    download_count: int
    thumbs_up_count: int
    require_auth: int
    free_trial_limit: int | None
    additional_resource_charge: int
    is_featured: int
    supports_generation: int
    model_name: str
    model_type: str
    model_nsfw: int
    model_poi: int
    model_mode: str | None
    owner_id: int
    model_status: str
    model_availability: str
    model_minor: int
    model_sfw_only: int

    @property
    def published(self) -> bool:
        """Published, in a model that is published (a Draft or Deleted model's versions are not)."""
        return self.status == "Published" and self.model_status == "Published" \
            and self.model_availability != "Private"

    def early_access_active(self, now: str) -> bool:
        return self.early_access_ends_at is not None and self.early_access_ends_at > now


def versions_by_ids(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, VersionRow]:
    if not ids:
        return {}
    rows = db.execute(f"SELECT {DETAIL_VERSION_COLUMNS} FROM model_versions v JOIN models m ON m.id = v.model_id"
                      f" WHERE v.id IN ({_marks(ids)})", list(ids))
    return {r[0]: VersionRow(*r) for r in rows}


def version_ids_by_hash(db: sqlite3.Connection, value: str) -> list[int]:
    """Versions with a file carrying this hash (any kind; upper-cased, as stored), oldest file first."""
    return [r[0] for r in db.execute(
        "SELECT DISTINCT f.version_id FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
        " WHERE h.hash = ? ORDER BY f.version_id", (value.upper(),))]


def file_matches_by_sha256(db: sqlite3.Connection, values: Iterable[str]) -> list[tuple[str, int]]:
    """(upper-case hash, version id) once per file carrying one of these SHA256s, in file order."""
    import orjson

    wanted = sorted({v.upper() for v in values})
    if not wanted:
        return []
    return [(r[0], r[1]) for r in db.execute(
        "SELECT h.hash, f.version_id FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
        " WHERE h.kind = 'SHA256' AND h.hash IN (SELECT value FROM json_each(?)) ORDER BY f.id",
        (orjson.dumps(wanted).decode(),))]


def version_ids_by_sha256(db: sqlite3.Connection, values: Iterable[str]) -> list[tuple[str, int]]:
    """(upper-case hash, version id) for each SHA256 in ``values`` that a file carries."""
    import orjson

    wanted = sorted({v.upper() for v in values})
    if not wanted:
        return []
    return [(r[0], r[1]) for r in db.execute(
        "SELECT h.hash, f.version_id FROM file_hashes h JOIN model_files f ON f.id = h.file_id"
        " WHERE h.kind = 'SHA256' AND h.hash IN (SELECT value FROM json_each(?)) ORDER BY h.hash, f.version_id",
        (orjson.dumps(wanted).decode(),))]


# --- permissions and early access -----------------------------------------------------------------

def early_access_purchases(db: sqlite3.Connection, user_id: int, version_ids: Sequence[int]) -> dict[int, str]:
    """version id -> purchased_at, for the versions this user unlocked."""
    if not version_ids:
        return {}
    return {r[0]: r[1] for r in db.execute(
        f"SELECT version_id, purchased_at FROM early_access_purchases WHERE user_id = ?"
        f" AND version_id IN ({_marks(version_ids)})", [user_id, *version_ids])}


# --- lookups for filters ---------------------------------------------------------------------------

def tag_id(db: sqlite3.Connection, name: str) -> int | None:
    row = db.execute("SELECT id FROM tags WHERE name = ? AND kind = 'model'", (name,)).fetchone()
    return None if row is None else int(row[0])


_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """A username's slug: accents dropped, lower case, every run of other characters one '-'."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _SLUG_DROP.sub("-", plain).strip("-")


def user_ids_by_username(db: sqlite3.Connection, username: str) -> list[int]:
    """The users a username parameter names: the exact name (any case), else every user with its slug."""
    row = db.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
    if row is not None:
        return [int(row[0])]
    slug = slugify(username)
    if not slug:
        return []
    return [int(r[0]) for r in db.execute("SELECT id, username FROM users") if slugify(r[1]) == slug]


def category_of_model(db: sqlite3.Connection, model_id: int) -> str:
    """The model's first category tag (vault items keep it), or ''."""
    row = db.execute("SELECT t.name FROM model_tags mt JOIN tags t ON t.id = mt.tag_id WHERE mt.model_id = ?"
                     " AND t.is_category = 1 ORDER BY t.name LIMIT 1", (model_id,)).fetchone()
    return "" if row is None else str(row[0])
