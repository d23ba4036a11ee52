"""Fixture rows for the media-family tests (images, posts, articles, collections, users,
creators, tags), added on top of the seed.

The seed gives realistic volume; these rows give the exact states each test needs
(every post state, images of every rating, videos with and without custom
thumbnails, a post of more than 100 images, articles and collections in every
visibility...). Their ids start far above the seed's (``BASE``), and every test finds
them through the ``MediaData`` this module returns, never by a literal id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from blockkit.emulator.store import Store

BASE = 900_000_000
T0 = "2025-06-01T00:00:00.000Z"


def ts(day: int, second: int = 0) -> str:
    """A timestamp ``day`` days and ``second`` seconds after 2025-06-01 (day < 28)."""
    return f"2025-06-{1 + day:02d}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


@dataclass
class MediaData:
    users: dict[str, int] = field(default_factory=dict)
    usernames: dict[str, str] = field(default_factory=dict)
    tags: dict[str, int] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    posts: dict[str, int] = field(default_factory=dict)
    images: dict[str, int] = field(default_factory=dict)
    post_images: dict[str, list[int]] = field(default_factory=dict)
    articles: dict[str, int] = field(default_factory=dict)
    collections: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


class _Builder:
    def __init__(self, db: Any) -> None:
        self.db = db
        self.data = MediaData()
        self.counters: dict[str, int] = {}

    def next_id(self, table: str) -> int:
        self.counters[table] = self.counters.get(table, 0) + 1
        return BASE + self.counters[table]

    def insert(self, table: str, **row: Any) -> int:
        row.setdefault("id", self.next_id(table))
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self.db.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(row.values()))
        return int(row["id"])

    # --- rows ---------------------------------------------------------------------------

    def user(self, key: str, username: str, **extra: Any) -> int:
        extra.setdefault("created_at", T0)
        user_id = self.insert("users", username=username, **extra)
        self.data.users[key] = user_id
        self.data.usernames[key] = username
        return user_id

    def tag(self, key: str, name: str, kind: str, is_category: int = 0) -> int:
        tag_id = self.insert("tags", name=name, kind=kind, is_category=is_category, created_at=T0)
        self.data.tags[key] = tag_id
        return tag_id

    def model(self, key: str, user: int, status: str = "Published", **extra: Any) -> int:
        model_id = self.insert("models", user_id=user, name=f"Media {key}", type="LORA", status=status,
                               created_at=T0, updated_at=T0, published_at=T0 if status == "Published" else None,
                               **extra)
        self.data.models[key] = model_id
        return model_id

    def version(self, key: str, model: int, status: str = "Published") -> int:
        version_id = self.insert("model_versions", model_id=model, position=0, name=f"v-{key}",
                                 base_model="SD 1.5", air_ecosystem="sd1", air_type="lora", status=status,
                                 created_at=T0, updated_at=T0, published_at=T0 if status == "Published" else None)
        self.data.versions[key] = version_id
        return version_id

    def post(self, key: str, user: int, *, availability: str = "Public", published: str | None = T0,
             scanned: int = 1, blocked: int = 0, version: int | None = None, title: str | None = None,
             tags: tuple[int, ...] = ()) -> int:
        post_id = self.insert("posts", user_id=user, title=title or f"Post {key}", detail="<p>detail</p>",
                              model_version_id=version, availability=availability, scanned=scanned,
                              blocked=blocked, created_at=T0, updated_at=T0, published_at=published)
        for tag in tags:
            self.db.execute("INSERT INTO post_tags (post_id, tag_id) VALUES (?, ?)", (post_id, tag))
        self.data.posts[key] = post_id
        self.data.post_images[key] = []
        return post_id

    def image(self, key: str | None, user: int, post_key: str | None, *, level: int = 1, kind: str = "image",
              scanned: bool = True, reactions: int = 0, comments: int = 0, collected: int = 0,
              created: str = T0, tags: tuple[int, ...] = (), versions: tuple[int, ...] = (),
              meta: dict[str, Any] | None = None, thumbnail_level: int | None = None,
              base_model: str | None = "SD 1.5", position: int | None = None) -> int:
        post_id = self.data.posts[post_key] if post_key else None
        if post_key is not None and position is None:
            position = len(self.data.post_images[post_key])
        ext = {"image": "jpeg", "video": "mp4", "audio": "mp3"}[kind]
        image_id = self.next_id("images")
        thumb: dict[str, Any] = {}
        if thumbnail_level is not None:
            thumb = {"thumbnail_url": f"/__emulator/media/thumb-{image_id}.webp",
                     "thumbnail_nsfw_level": thumbnail_level, "thumbnail_width": 320, "thumbnail_height": 180}
        audio = kind == "audio"
        self.insert("images", id=image_id, user_id=user, post_id=post_id, post_position=position, type=kind,
                    url=f"/__emulator/media/media-{image_id}.{ext}", name=f"media-{image_id}.{ext}",
                    blurhash=None if audio else "LEHV6nWB2yk8pyo0adR*.7kCMdnj", width=None if audio else 640,
                    height=None if audio else 480, duration=3.0 if kind != "image" else None, nsfw_level=level,
                    scanned_at=created if scanned else None,
                    meta=orjson.dumps(meta).decode() if meta is not None else None,
                    base_model=base_model, created_at=created, **thumb)
        for period, share in (("AllTime", 1.0), ("Year", 1.0), ("Month", 0.5), ("Week", 0.25), ("Day", 0.0)):
            r = int(reactions * share)
            self.db.execute(
                "INSERT INTO image_metrics (image_id, period, like_count, heart_count, comment_count,"
                " collected_count, reaction_count) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (image_id, period, r - r // 2, r // 2, int(comments * share), int(collected * share), r))
        for tag in tags:
            self.db.execute("INSERT INTO image_tags (image_id, tag_id) VALUES (?, ?)", (image_id, tag))
        for version in versions:
            self.db.execute("INSERT INTO image_resources (image_id, model_version_id, resource_type, weight)"
                            " VALUES (?, ?, 'lora', 0.8)", (image_id, version))
        if post_key is not None:
            self.data.post_images[post_key].append(image_id)
            self.db.execute("UPDATE posts SET nsfw_level = nsfw_level | ? WHERE id = ?", (level, post_id))
        if key is not None:
            self.data.images[key] = image_id
        return image_id

    def article(self, key: str, user: int, *, status: str = "Published", availability: str = "Public",
                scanned: bool = True, cover: int | None = None, level: int = 1, title: str | None = None,
                day: int = 1, reactions: int = 0, comments: int = 0, favorites: int = 0, collected: int = 0,
                tags: tuple[int, ...] = ()) -> int:
        published = ts(day) if status == "Published" else None
        article_id = self.insert(
            "articles", user_id=user, title=title or f"Media article {key}", content=f"<p>Body of {key}</p>",
            cover_image_id=cover, status=status, availability=availability, nsfw_level=level,
            user_nsfw_level=level, moderator_nsfw_level=level, scanned_at=ts(day) if scanned else None,
            favorite_count=favorites, collected_count=collected, comment_count=comments, like_count=reactions,
            reaction_count=reactions, created_at=ts(day), updated_at=ts(day, 3600 * (28 - day)),
            published_at=published)
        for tag in tags:
            self.db.execute("INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?)", (article_id, tag))
        self.data.articles[key] = article_id
        return article_id

    def collection(self, key: str, user: int, *, read: str = "Public", name: str | None = None,
                   cover: int | None = None, level: int = 1, followers: int = 0, kind: str = "Image",
                   items: tuple[tuple[int, str], ...] = (), tags: tuple[int, ...] = ()) -> int:
        collection_id = self.insert(
            "collections", user_id=user, name=name or f"Media collection {key}", description=None, type=kind,
            read=read, cover_image_id=cover, nsfw_level=level, follower_count=followers, created_at=T0,
            updated_at=T0)
        column = {"Image": "image_id", "Model": "model_id", "Article": "article_id", "Post": "post_id"}[kind]
        for item, status in items:
            self.db.execute(f"INSERT INTO collection_items (collection_id, kind, {column}, status, created_at)"
                            " VALUES (?, ?, ?, ?, ?)", (collection_id, kind.lower(), item, status, T0))
        for tag in tags:
            self.db.execute("INSERT INTO collection_tags (collection_id, tag_id) VALUES (?, ?)",
                            (collection_id, tag))
        self.data.collections[key] = collection_id
        return collection_id


def build(store: Store) -> MediaData:
    """Add the fixture rows to a (seeded) store; return where they are."""
    with store.write() as db:
        b = _Builder(db)
        _build(b)
        return b.data


def _build(b: _Builder) -> None:
    owner = b.user("owner", "Media_Owner", browsing_level=31, image="/__emulator/media/avatar-owner.jpeg")
    other = b.user("other", "media.other", browsing_level=3)
    gone = b.user("gone", "MediaGone", deleted_at=T0)
    b.user("avatar", "MediaMatureAvatar", avatar_nsfw="Mature")
    # Prefix family for /users?query= (shortest first).
    for name in ("mq", "mqa", "mqab", "mqabc", "mqabcd", "mqabcde"):
        b.user(f"prefix_{name}", f"Zz{name}")
    b.user("prefix_deleted", "Zzmqz", deleted_at=T0)

    t_red = b.tag("red", "media-red", "image")
    t_blue = b.tag("blue", "media-blue", "image")
    t_green = b.tag("green", "media-green", "image")
    t_post = b.tag("post", "media-post-tag", "post")
    t_model = b.tag("model", "zz-media-model-tag", "model")
    b.tag("model_category", "zz-media-model-category", "model", 1)
    t_article = b.tag("article", "media-article-tag", "article")
    t_article_cat = b.tag("article_category", "media-article-category", "article", 1)
    t_collection = b.tag("collection", "media-collection-tag", "collection")

    m1 = b.model("m1", owner)
    v1 = b.version("v1", m1)
    v2 = b.version("v2", m1)
    m_other = b.model("m_other", other)
    v_other = b.version("v_other", m_other)
    b.model("draft", gone, status="Draft")
    b.model("gone_published", gone)
    db = b.db
    db.execute("INSERT INTO model_tags (model_id, tag_id) VALUES (?, ?)", (m1, t_model))

    # The public post: one image per rating, videos, audio, unscanned, meta.
    b.post("public", owner, version=v1, tags=(t_post,))
    b.image("pg", owner, "public", level=1, reactions=900, comments=5, collected=50, created=ts(1, 10),
            tags=(t_red, t_blue), versions=(v1, v2),
            meta={"prompt": "a red fox", "seed": 1, "civitaiResources": [
                {"type": "lora", "modelVersionId": v1, "weight": 0.8}, {"type": "lora", "modelVersionId": v2},
                {"type": "lora", "modelVersionId": v1}], "unknownKey": {"kept": True}})
    b.image("pg13", owner, "public", level=2, reactions=800, comments=50, collected=5, created=ts(1, 20),
            tags=(t_red,), versions=(v1,))
    b.image("r", owner, "public", level=4, reactions=700, comments=40, collected=500, created=ts(1, 30),
            tags=(t_blue,), versions=(v2,))
    b.image("x", owner, "public", level=8, reactions=600, comments=30, collected=40, created=ts(1, 40))
    b.image("xxx", owner, "public", level=16, reactions=550, created=ts(1, 45))
    b.image("blocked_image", owner, "public", level=32, reactions=540, created=ts(1, 46))
    b.image("video_custom_r", owner, "public", kind="video", level=1, thumbnail_level=4, reactions=500,
            created=ts(1, 50), tags=(t_green,))
    b.image("video_custom_pg", owner, "public", kind="video", level=1, thumbnail_level=1, reactions=400,
            created=ts(1, 60), tags=(t_green,))
    b.image("video_plain", owner, "public", kind="video", level=1, reactions=300, created=ts(1, 70),
            tags=(t_green,))
    b.image("audio", owner, "public", kind="audio", level=1, reactions=200, created=ts(1, 80), base_model=None)
    b.image("unscanned", owner, "public", level=0, scanned=False, reactions=990, created=ts(1, 90))
    b.image("no_meta", owner, "public", level=1, reactions=100, created=ts(1, 100))

    # Posts in every other state, one PG image each, all tagged red+blue and made with v1.
    for state, kwargs in (("unlisted", {"availability": "Unlisted"}), ("early", {"availability": "EarlyAccess"}),
                          ("private", {"availability": "Private"}), ("unpublished", {"published": None}),
                          ("future", {"published": "2099-01-01T00:00:00.000Z"}), ("blocked", {"blocked": 1}),
                          ("unscanned_post", {"scanned": 0})):
        b.post(state, owner, **kwargs)
        b.image(f"in_{state}", owner, state, level=1, reactions=850, created=ts(2), tags=(t_red, t_blue),
                versions=(v1,))
    b.post("mature", other, version=v_other)
    b.image("mature_x", other, "mature", level=8, reactions=10, created=ts(3))
    b.image("mature_pg", other, "mature", level=1, reactions=10, created=ts(3, 1))
    b.post("unpublished_version", other, version=b.version("unpublished_v", m_other, status="Draft"))
    b.image("in_unpublished_version", other, "unpublished_version", level=1, created=ts(3, 2))

    # A post of 105 images: position 1 unscanned, position 3 rated X, the rest PG.
    b.post("big", other)
    for position in range(105):
        level = 8 if position == 3 else 1
        b.image(None, other, "big", level=level if position != 1 else 0, scanned=position != 1,
                created=ts(4, position), reactions=position)

    # Empty pages: the other user's newest image is in an unlisted post, the next in a public one.
    b.post("gap_public", other)
    b.image("gap_public", other, "gap_public", level=1, created=ts(20), reactions=1)
    b.post("gap_unlisted", other, availability="Unlisted")
    for n in range(3):
        b.image(f"gap_unlisted_{n}", other, "gap_unlisted", level=1, created=ts(21, n), reactions=1)

    # Articles.
    cover_pg = b.image("cover_pg", owner, None, level=1, created=ts(5))
    cover_x = b.image("cover_x", owner, None, level=8, created=ts(5, 1))
    b.article("published", owner, cover=cover_pg, day=10, reactions=50, comments=3, favorites=9, collected=1,
              tags=(t_article, t_article_cat), title="Zebra lighting guide")
    b.article("mature_cover", owner, cover=cover_x, level=8, day=11, reactions=5, title="Mature cover piece")
    b.article("no_cover", other, day=12, reactions=500, comments=30, favorites=1, collected=99,
              title="Zebra without a cover")
    b.article("draft", owner, status="Draft", day=13)
    b.article("unpublished", owner, status="Unpublished", day=14)
    b.article("private", owner, availability="Private", day=15)
    b.article("unscanned", owner, scanned=False, day=16)
    for n in range(5):
        b.article(f"walk_{n}", other, day=17, reactions=n, title=f"Walkthrough {n}")

    # Collections.
    public_images = tuple(b.data.post_images["public"][:3])
    b.collection("public", owner, name="Media zebra favourites", cover=b.data.images["pg"], followers=7,
                 items=((public_images[0], "ACCEPTED"), (public_images[1], "ACCEPTED"),
                        (public_images[2], "REVIEW"), (b.data.images["no_meta"], "REJECTED")),
                 tags=(t_collection,))
    b.collection("x_cover", owner, name="Media zebra dark", cover=b.data.images["x"], level=9, followers=3)
    b.collection("mature_only", other, name="Media zebra mature", level=8, followers=1)
    b.collection("no_cover", other, name="Media plain", followers=1_000_000)
    b.collection("unscanned_cover", other, name="Media zebra unscanned", cover=b.data.images["unscanned"])
    b.collection("private", owner, read="Private", name="Media zebra private")
    b.collection("unlisted", owner, read="Unlisted", name="Media zebra unlisted")
    b.data.extra["accepted_in_public"] = 2
