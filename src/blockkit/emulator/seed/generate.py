"""The seed generator: one ``random.Random(seed)``, fixed dates, every state the spec names.

Determinism: every draw comes from one RNG in a fixed order, every date is an
offset from ``ANCHOR`` (2026-01-01T00:00:00Z), rows go in by id. So the same
seed and scale give the same rows, byte for byte, on any machine.

Coverage does not depend on luck: the first users, models, posts and images are
*forced* into the states the spec names (every tier and status, the moderator,
archived and taken-down models, early-access, private training-result and
unpublished versions, every NSFW bit, videos with and without a custom
thumbnail, audio, unlisted/early-access/private/unpublished/blocked/unscanned
posts, a post with more than 100 images, ...); the rest is drawn at random with
realistic weights. Their ids go into the ``landmarks`` (meta), which tests and
routes read instead of hard-coding ids.

Dates that must still lie ahead of the real clock (an early access that is
active) are set years past the anchor; advance the clock to pass them.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from random import Random
from typing import Any

import orjson

from blockkit.emulator import facts
from blockkit.emulator.services import files
from blockkit.emulator.seed import words
from blockkit.emulator.seed.sink import Sink
from blockkit.emulator.store import Store, meta
from blockkit.emulator.store import migrate
from blockkit.emulator.store import models as model_store

ANCHOR = datetime(2026, 1, 1, tzinfo=timezone.utc)
ANCHOR_TS = int(ANCHOR.timestamp())
SITE_START_TS = int(datetime(2022, 11, 1, tzinfo=timezone.utc).timestamp())
DAY = 86_400
YEAR = 365 * DAY
# An early access that is still running for any real clock this tool will meet; an
# ended one lies before the anchor.
EARLY_ACCESS_ACTIVE_UNTIL_TS = int(datetime(2031, 1, 1, tzinfo=timezone.utc).timestamp())

MEDIA = "/__emulator/media"  # relative to base_url; the response layer makes URLs absolute


@dataclass(frozen=True)
class ScaleSpec:
    users: int
    models: int
    community_posts: int
    articles: int
    collections: int
    big_post_images: int
    max_images_per_post: int


SCALE_SPECS: dict[str, ScaleSpec] = {
    "small": ScaleSpec(users=48, models=120, community_posts=20, articles=30, collections=24,
                       big_post_images=120, max_images_per_post=3),
    "large": ScaleSpec(users=5_000, models=10_000, community_posts=8_000, articles=1_500, collections=800,
                       big_post_images=150, max_images_per_post=6),
}


_DAY_PREFIXES: dict[int, str] = {}


def ts(seconds: int) -> str:
    """A timestamp in the store's one form (whole seconds: '.000Z'); the date part is cached per day."""
    day, rest = divmod(seconds, DAY)
    prefix = _DAY_PREFIXES.get(day)
    if prefix is None:
        prefix = _DAY_PREFIXES[day] = time.strftime("%Y-%m-%dT", time.gmtime(day * DAY))
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{prefix}{hours:02d}:{minutes:02d}:{secs:02d}.000Z"


def _weighted(rng: Random, table: dict[Any, float]) -> Any:
    return rng.choices(list(table), weights=list(table.values()))[0]


MODEL_TYPE_WEIGHTS: dict[str, float] = {
    "LORA": 45, "Checkpoint": 18, "TextualInversion": 8, "LoCon": 7, "DoRA": 3, "Controlnet": 3, "VAE": 2,
    "Upscaler": 2, "MotionModule": 1, "Hypernetwork": 1, "AestheticGradient": 0.5, "Poses": 2, "Wildcards": 2,
    "Workflows": 3, "Detection": 1, "Other": 1.5,
}
# Image ratings as uploads are rated: 0 = not yet rated (and not scanned).
IMAGE_LEVEL_WEIGHTS: dict[int, float] = {1: 50, 2: 20, 4: 12, 8: 8, 16: 5, 32: 2, 0: 3}
TIER_WEIGHTS: dict[str, float] = {"free": 75, "bronze": 10, "silver": 6, "gold": 5, "founder": 4}
STATUS_WEIGHTS: dict[str, float] = {"active": 94, "muted": 4, "banned": 2}
IMAGE_SIZES = ((512, 768), (768, 512), (832, 1216), (1216, 832), (1024, 1024), (896, 1152), (768, 1344))
VIDEO_SIZES = ((720, 1280), (1280, 720), (512, 512), (848, 480))
BLURHASH_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~"
_B83 = BLURHASH_ALPHABET
_B83_PAIRS = [a + b for a in _B83 for b in _B83]  # value v -> its two base-83 digits
# Resource type of an image's civitaiResources entry, by ModelType.
RESOURCE_TYPES: dict[str, str] = {
    "Checkpoint": "checkpoint", "LORA": "lora", "LoCon": "lora", "DoRA": "dora", "TextualInversion": "embed",
    "Hypernetwork": "hypernet", "VAE": "vae", "Controlnet": "controlnet", "Upscaler": "upscaler",
}
IMAGE_COLUMNS = (
    "id", "user_id", "post_id", "post_position", "type", "url", "name", "blurhash", "width", "height", "duration",
    "nsfw_level", "scanned_at", "meta", "base_model", "thumbnail_url", "thumbnail_nsfw_level", "thumbnail_width",
    "thumbnail_height", "created_at",
)
# The base models the seed draws its models from, and whether the seed's on-site generation
# covers each (``active`` here). Frozen at the list the seed was first written with, so that a
# seed number keeps giving the same data as facts.BASE_MODELS grows; the newer kinds
# (NEW_KIND_MODELS) name their base models from facts.BASE_MODELS.
SEED_BASE_MODELS: tuple[facts.BaseModel, ...] = (
    facts.BaseModel("SD 1.4", "sd1", False, "image"),
    facts.BaseModel("SD 1.5", "sd1", True, "image"),
    facts.BaseModel("SD 1.5 LCM", "sd1", False, "image"),
    facts.BaseModel("SD 1.5 Hyper", "sd1", False, "image"),
    facts.BaseModel("SD 2.0", "sd2", False, "image"),
    facts.BaseModel("SD 2.1", "sd2", False, "image"),
    facts.BaseModel("SDXL 1.0", "sdxl", True, "image"),
    facts.BaseModel("SDXL Lightning", "sdxl", False, "image"),
    facts.BaseModel("SDXL Hyper", "sdxl", False, "image"),
    facts.BaseModel("SDXL Turbo", "sdxl", False, "image"),
    facts.BaseModel("Pony", "sdxl", True, "image"),
    facts.BaseModel("Illustrious", "sdxl", True, "image"),
    facts.BaseModel("NoobAI", "sdxl", True, "image"),
    facts.BaseModel("SD 3", "sd3", False, "image"),
    facts.BaseModel("SD 3.5", "sd3", True, "image"),
    facts.BaseModel("SD 3.5 Large", "sd3", True, "image"),
    facts.BaseModel("Flux.1 S", "flux1", True, "image"),
    facts.BaseModel("Flux.1 D", "flux1", True, "image"),
    facts.BaseModel("AuraFlow", "auraflow", False, "image"),
    facts.BaseModel("Kolors", "kolors", False, "image"),
    facts.BaseModel("PixArt a", "pixarta", False, "image"),
    facts.BaseModel("PixArt E", "pixarte", False, "image"),
    facts.BaseModel("Lumina", "lumina", False, "image"),
    facts.BaseModel("Stable Cascade", "scascade", False, "image"),
    facts.BaseModel("SVD", "svd", False, "video"),
    facts.BaseModel("Hunyuan 1", "hydit1", False, "image"),
    facts.BaseModel("Hunyuan Video", "hyv1", True, "video"),
    facts.BaseModel("Wan Video", "wanvideo", True, "video"),
    facts.BaseModel("LTXV", "ltxv", True, "video"),
    facts.BaseModel("Mochi", "mochi", False, "video"),
    facts.BaseModel("Other", "other", False, "image"),
)
# The model types the main model loop makes one of each (then draws by MODEL_TYPE_WEIGHTS): the
# 16 the seed was first written with. The newer ones come from NEW_KIND_MODELS.
SEED_MODEL_TYPES: tuple[str, ...] = (
    "Checkpoint", "TextualInversion", "Hypernetwork", "AestheticGradient", "LORA", "LoCon", "DoRA",
    "Controlnet", "Upscaler", "MotionModule", "VAE", "Poses", "Wildcards", "Workflows", "Detection", "Other",
)
# One published model of each newer ModelType, made after everything else (so the data above
# stays as it was): (type, base model, files as (file type, name suffix, KB range, format, fp, primary)).
KindFile = tuple[str, str, tuple[int, int], str, "str | None", bool]
NEW_KIND_MODELS: tuple[tuple[str, str, tuple[KindFile, ...]], ...] = (
    ("UNet", "Flux.1 D", (("Diffusion Model", "_fp8_e4m3fn.safetensors", (11_000_000, 12_000_000), "SafeTensor",
                           "fp8", True),
                          ("UNet", "_Q8_0.gguf", (12_000_000, 12_800_000), "GGUF", None, False))),
    ("TextEncoder", "Flux.1 D", (("Text Encoder", "_t5xxl_fp16.safetensors", (9_000_000, 9_600_000), "SafeTensor",
                                  "fp16", True),)),
    ("CLIPVision", "Wan Video 14B i2v 720p", (("CLIPVision", "_clip_vision_h.safetensors", (1_200_000, 1_300_000),
                                              "SafeTensor", "fp16", True),)),
    # Primary: the file the platform's getPrimaryFile scores highest (a SafeTensor fp16 beats the JSON
    # workflow), so that the version's downloadUrl serves the file the listing marks primary.
    ("ComfyWorkflows", "Flux.1 D", (("Workflow", "_workflow.json", (20, 90), "Other", None, False),
                                    ("ControlNet", "_controlnet_union.safetensors", (2_400_000, 2_600_000),
                                     "SafeTensor", "fp16", True),
                                    ("Upscaler", "_4x_upscaler.pth", (60_000, 70_000), "PickleTensor", None, False),
                                    ("Enhancement LoRA", "_detail.safetensors", (100_000, 300_000), "SafeTensor",
                                     "bf16", False),
                                    ("Other", "_notes.txt", (1, 4), "Other", None, False))),
    ("VisionLanguage", "Qwen", (("Model", "_Q4_K_M.gguf", (4_500_000, 5_000_000), "GGUF", None, True),
                                ("Vision Encoder", "_mmproj_f16.gguf", (600_000, 700_000), "GGUF", "fp16", False))),
    ("CLIP", "SDXL 1.0", (("Model", "_clip_l.safetensors", (240_000, 250_000), "SafeTensor", "fp16", True),)),
    ("LLM", "Other", (("Model", "_Q5_K_M.gguf", (5_000_000, 5_800_000), "GGUF", None, True),)),
)

# The forced first models: (landmark key, overrides).
FORCED_MODELS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("archived_model", {"mode": "Archived"}),
    ("taken_down_model", {"mode": "TakenDown"}),
    ("early_access_model", {"type": "LORA", "early_access": "active"}),
    ("ended_early_access_model", {"type": "LORA", "early_access": "ended"}),
    ("epoch_model", {"type": "LORA", "epoch": True}),
    ("unpublished_version_model", {"type": "Checkpoint", "unpublished_version": True}),
    ("draft_model", {"status": "Draft"}),
    ("unpublished_model", {"status": "Unpublished"}),
    ("deleted_model", {"status": "Deleted"}),
    ("every_file_type_model", {"type": "Checkpoint", "every_file": True}),
    ("poi_model", {"poi": True}),
    ("minor_model", {"minor": True}),
    ("sfw_only_model", {"sfw_only": True}),
    ("require_auth_model", {"require_auth": True}),
    ("generation_only_model", {"type": "Checkpoint", "usage_control": "Generation", "resource_charge": True}),
)


class Generator:
    def __init__(self, sink: Sink, rng: Random, spec: ScaleSpec) -> None:
        self.sink = sink
        self.rng = rng
        self.spec = spec
        self.landmarks: dict[str, Any] = {}
        self._next: dict[str, int] = {}
        self.users: list[dict[str, Any]] = []
        self.creators: list[dict[str, Any]] = []
        self.tags: dict[str, list[int]] = {}
        self.versions: list[dict[str, Any]] = []        # every version made
        self.public_versions: list[dict[str, Any]] = []  # published, public, of healthy published models
        self.lora_versions: list[dict[str, Any]] = []
        self.models: list[dict[str, Any]] = []
        self.posts: list[dict[str, Any]] = []
        self.public_images: list[int] = []
        self.articles: list[int] = []
        self._forced_images: list[dict[str, Any]] = []
        # Positional adders for the tables with most rows (see Sink.appender).
        self.add_image_metrics = sink.appender("image_metrics", (
            "image_id", "period", "cry_count", "laugh_count", "like_count", "dislike_count", "heart_count",
            "comment_count", "collected_count", "reaction_count"))
        self.add_image_tag = sink.appender("image_tags", ("image_id", "tag_id"))
        self.add_image_resource = sink.appender("image_resources",
                                                ("image_id", "model_version_id", "resource_type", "weight"))
        self.add_file_hash = sink.appender("file_hashes", ("file_id", "kind", "hash"))
        self.add_image = sink.appender("images", IMAGE_COLUMNS)
        self.file_seed = 0

    # --- helpers --------------------------------------------------------------------------

    def next_id(self, kind: str) -> int:
        value = self._next.get(kind, 0) + 1
        self._next[kind] = value
        return value

    def when(self, after: int, before: int = ANCHOR_TS - DAY) -> int:
        after = min(after, before - 60)
        return self.rng.randint(after, before)

    def uid(self) -> str:
        """A version-4 UUID from the seed's RNG (formatted by hand: uuid.UUID is slow in bulk)."""
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def hexhash(self, digits: int) -> str:
        return f"{self.rng.getrandbits(digits * 4):0{digits}X}"

    def blurhash(self) -> str:
        """A well-formed BlurHash (4x3 components) of made-up colours."""
        bits = self.rng.getrandbits(176)
        # Size flag (4x3), max AC, the DC colour (24 bits), then 11 AC values (< 19**3 each).
        dc = (bits >> 7) & 0xFFFFFF
        text = _B83[21] + _B83[bits % 83] + _B83_PAIRS[dc // 6889] + _B83_PAIRS[dc % 6889]
        bits >>= 31
        for _ in range(11):
            bits, value = divmod(bits, 6859)
            text += _B83_PAIRS[value]
        return text

    def pick_tags(self, kind: str, low: int, high: int) -> list[int]:
        """low..high distinct tags of a kind (fewer when a draw repeats), by id."""
        count = low + int(self.rng.random() * (high - low + 1))
        return sorted(set(self.rng.choices(self.tags[kind], k=count))) if count else []

    # --- users ----------------------------------------------------------------------------

    def make_users(self) -> None:
        rng = self.rng
        self.sink.add("users", id=facts.SYSTEM_USER_ID, username=facts.SYSTEM_USERNAME, email="support@civitai.com",
                      email_verified=1, image=f"{MEDIA}/avatars/civitai.png", tier="free", status="active",
                      is_moderator=1, browsing_level=facts.ALL_BROWSING_LEVELS, created_at=ts(SITE_START_TS))
        self.landmarks["system_user"] = {"id": facts.SYSTEM_USER_ID, "username": facts.SYSTEM_USERNAME}
        roles: list[tuple[str, dict[str, Any]]] = [
            ("moderator", {"tier": "silver", "is_moderator": 1, "browsing_level": facts.ALL_BROWSING_LEVELS}),
            ("free_user", {"tier": "free", "creator": False}),
            ("member", {"tier": "gold", "browsing_level": facts.ALL_BROWSING_LEVELS, "creator": False}),
            ("founder_user", {"tier": "founder"}),
            ("bronze_user", {"tier": "bronze"}),
            ("silver_user", {"tier": "silver"}),
            ("creator", {"tier": "free", "creator": True}),
            ("muted_user", {"status": "muted"}),
            ("banned_user", {"status": "banned", "creator": False}),
            ("deleted_user", {"deleted": True, "creator": True}),
            ("no_email_user", {"email": None}),
            ("unverified_email_user", {"email_verified": 0}),
            ("mature_avatar_user", {"avatar_nsfw": "Mature", "browsing_level": 15}),
            ("no_avatar_user", {"image": None, "creator": False}),
        ]
        taken: set[str] = {facts.SYSTEM_USERNAME}
        for index in range(max(self.spec.users, len(roles) + 6)):
            role, forced = roles[index] if index < len(roles) else ("", {})
            user_id = self.next_id("user")
            while True:
                name = f"{rng.choice(words.USERNAME_HEADS)}{rng.choice(['', '_', '.'])}{rng.choice(words.USERNAME_TAILS)}"
                if rng.random() < 0.4 or name.lower() in taken:
                    name += str(rng.randint(1, 999))
                if name.lower() not in taken:
                    taken.add(name.lower())
                    break
            tier = forced.get("tier") or _weighted(rng, TIER_WEIGHTS)
            status = forced.get("status") or (_weighted(rng, STATUS_WEIGHTS) if not role else "active")
            deleted = forced.get("deleted", not role and rng.random() < 0.03)
            has_email = rng.random() < 0.85 if not role else True
            email = forced.get("email", f"{name.lower().replace('.', '_')}@example.com" if has_email else None)
            verified = forced.get("email_verified", 1 if email and (role or rng.random() < 0.9) else 0)
            created = self.when(SITE_START_TS, ANCHOR_TS - 120 * DAY)
            image = forced.get("image", f"{MEDIA}/avatars/{self.uid()}.jpeg" if role or rng.random() < 0.8 else None)
            user = {
                "id": user_id, "username": name, "tier": tier, "status": status, "created": created,
                "deleted": deleted, "creator": forced.get("creator", rng.random() < 0.4),
            }
            self.sink.add(
                "users", id=user_id, username=name, email=email, email_verified=verified if email else 0,
                image=image, avatar_nsfw=forced.get("avatar_nsfw", "None"), tier=tier, status=status,
                is_moderator=forced.get("is_moderator", 0),
                browsing_level=forced.get("browsing_level", rng.choice((1, 3, 3, 7, 15, 31))),
                created_at=ts(created), deleted_at=ts(self.when(created + DAY)) if deleted else None,
            )
            self.users.append(user)
            if role:
                self.landmarks[role] = {"id": user_id, "username": name, "tier": tier, "status": status}
            self._subscriptions(user)
        self.creators = [u for u in self.users if u["creator"]]
        self.landmarks["tier_users"] = {
            tier: next(u["id"] for u in self.users if u["tier"] == tier and u["status"] == "active"
                       and not u["deleted"])
            for tier in facts.USER_TIERS
        }

    def _subscriptions(self, user: dict[str, Any]) -> None:
        rng = self.rng
        if user["tier"] in facts.MEMBER_TIERS:
            started = self.when(user["created"])
            self.sink.add("subscriptions", id=self.next_id("subscription"), user_id=user["id"],
                          product=words.SUBSCRIPTION_PRODUCTS[user["tier"]], tier=user["tier"], status="active",
                          started_at=ts(started), ends_at=None)
        elif rng.random() < 0.08:  # a lapsed member
            tier = rng.choice(facts.MEMBER_TIERS)
            started = self.when(user["created"], ANCHOR_TS - 60 * DAY)
            self.sink.add("subscriptions", id=self.next_id("subscription"), user_id=user["id"],
                          product=words.SUBSCRIPTION_PRODUCTS[tier], tier=tier,
                          status=rng.choice(("canceled", "expired")), started_at=ts(started),
                          ends_at=ts(self.when(started + DAY, ANCHOR_TS - 30 * DAY)))

    # --- tags -----------------------------------------------------------------------------

    def make_tags(self) -> None:
        groups = (
            ("model", words.MODEL_TAGS, 0), ("model", words.MODEL_CATEGORY_TAGS, 1),
            ("article", words.ARTICLE_TAGS, 0), ("article", words.ARTICLE_CATEGORY_TAGS, 1),
            ("image", words.IMAGE_TAGS, 0), ("post", words.POST_TAGS, 0), ("collection", words.COLLECTION_TAGS, 0),
        )
        for kind, names, is_category in groups:
            for name in names:
                tag_id = self.next_id("tag")
                self.sink.add("tags", id=tag_id, name=name, kind=kind, is_category=is_category,
                              created_at=ts(SITE_START_TS + tag_id * DAY))
                # Draw pools: plain tags and category tags apart (a model gets 1-4 plus 0-1 category).
                self.tags.setdefault(f"{kind}_category" if is_category else kind, []).append(tag_id)
        first = {kind: ids[0] for kind, ids in self.tags.items()}
        self.landmarks["tags"] = {
            "model_tag": {"id": first["model"], "name": words.MODEL_TAGS[0]},
            "model_category_tag": {"id": first["model_category"], "name": words.MODEL_CATEGORY_TAGS[0]},
            "article_tag": {"id": first["article"], "name": words.ARTICLE_TAGS[0]},
            "article_category_tag": {"id": first["article_category"], "name": words.ARTICLE_CATEGORY_TAGS[0]},
            "image_tag": {"id": first["image"], "name": words.IMAGE_TAGS[0]},
            "post_tag": {"id": first["post"], "name": words.POST_TAGS[0]},
        }

    # --- models ---------------------------------------------------------------------------

    def model_name(self, model_type: str) -> str:
        rng = self.rng
        adj, noun, style = rng.choice(words.ADJECTIVES), rng.choice(words.NOUNS), rng.choice(words.STYLES)
        subject = rng.choice(words.SUBJECTS)
        options = {
            "Checkpoint": (f"{adj} {noun} Mix", f"{noun}Real XL", f"{adj}{noun} Diffusion", f"{style} Anime Mix"),
            "LORA": (f"{style} Style", f"{subject} - {rng.choice(words.CLOTHING)}", f"{adj} {noun} Concept",
                     f"{subject} ({style})"),
            "LoCon": (f"{style} LoCon", f"{adj} {subject}"),
            "DoRA": (f"{style} DoRA", f"{subject} DoRA"),
            "TextualInversion": (f"{adj}Neg", f"{style} Embedding", f"{noun} Helper TI"),
            "Workflows": (f"{style} ComfyUI Workflow", f"{adj} Upscale Pipeline"),
            "Wildcards": (f"{style} Wildcards", f"{subject} Outfit Wildcards"),
            "Poses": (f"{subject} Pose Pack", f"Dynamic {noun} Poses"),
        }.get(model_type, (f"{adj} {noun} {model_type}", f"{style} {model_type}"))
        return rng.choice(options)

    def make_models(self) -> None:
        rng = self.rng
        active_bases = [b for b in SEED_BASE_MODELS if b.active and b.kind == "image"]
        video_bases = [b for b in SEED_BASE_MODELS if b.active and b.kind == "video"]
        creator_landmark = self.landmarks["creator"]["id"]
        weights = [3.0 if u["id"] == creator_landmark else 1.0 / (1 + i % 7) for i, u in enumerate(self.creators)]
        cumulative = list(itertools.accumulate(weights))  # choices() would re-add them on every call
        self.landmarks["models_by_type"] = {}
        for index in range(self.spec.models):
            forced: dict[str, Any] = {}
            role = ""
            if index < len(FORCED_MODELS):
                role, forced = FORCED_MODELS[index]
            elif index < len(FORCED_MODELS) + len(SEED_MODEL_TYPES):
                forced = {"type": SEED_MODEL_TYPES[index - len(FORCED_MODELS)]}
            model_type = forced.get("type") or _weighted(rng, MODEL_TYPE_WEIGHTS)
            if index < 4:  # the landmark creator owns the first models
                owner = next(u for u in self.creators if u["id"] == creator_landmark)
            elif index == len(FORCED_MODELS) + len(SEED_MODEL_TYPES):  # a deleted account's model
                owner = next(u for u in self.users if u["id"] == self.landmarks["deleted_user"]["id"])
            else:
                owner = rng.choices(self.creators, cum_weights=cumulative)[0]
            status = forced.get("status") or ("Published" if forced or rng.random() < 0.94 else
                                              rng.choice(("Draft", "Unpublished", "UnpublishedViolation",
                                                          "Deleted")))
            mode = forced.get("mode")
            if mode is None and status == "Published" and not forced and rng.random() < 0.04:
                mode = rng.choice(facts.MODEL_MODES)
            if model_type == "MotionModule":
                base = next(b for b in SEED_BASE_MODELS if b.name == "SD 1.5")
            elif model_type in ("Checkpoint", "LORA") and rng.random() < 0.08:
                base = rng.choice(video_bases)
            else:
                base = rng.choice(active_bases) if rng.random() < 0.9 else rng.choice(SEED_BASE_MODELS)
            model_id = self.next_id("model")
            created = self.when(owner["created"] + DAY)
            model = {
                "id": model_id, "type": model_type, "owner": owner, "status": status, "mode": mode, "base": base,
                "name": self.model_name(model_type), "created": created, "forced": forced,
            }
            self.models.append(model)
            versions = self._make_versions(model)
            self._model_row(model, versions)
            if role:
                self.landmarks[role] = {"id": model_id, "name": model["name"], "type": model_type,
                                        "version_ids": [v["id"] for v in versions]}
            if (status == "Published" and mode is None and not role
                    and model_type not in self.landmarks["models_by_type"]):
                self.landmarks["models_by_type"][model_type] = model_id

    def _model_row(self, model: dict[str, Any], versions: list[dict[str, Any]]) -> None:
        """The model's row, its metrics and its tags (after its versions)."""
        rng = self.rng
        model_id, model_type, owner, status, mode, base = (model["id"], model["type"], model["owner"],
                                                           model["status"], model["mode"], model["base"])
        forced, created = model["forced"], model["created"]
        published = [v for v in versions if v["published_at"] is not None]
        nsfw_level = 0
        for version in versions:
            nsfw_level |= version["nsfw_level"]
        trained = any(v["upload_type"] == "Trained" for v in versions)
        supports_generation = int(status == "Published" and mode is None and base.active
                                  and model_type in ("Checkpoint", "LORA", "LoCon", "DoRA", "TextualInversion",
                                                     "VAE"))
        commercial = rng.choice(("{Image,RentCivit,Rent,Sell}", "{Image,RentCivit}", "{Image}", "{}",
                                 "{RentCivit,Rent}"))
        last = max((v["published_ts"] for v in published), default=None)
        self.sink.add(
            "models", id=model_id, user_id=owner["id"], name=model["name"],
            description=f"<p>{model['name']}: {rng.choice(words.STYLES).lower()} results on"
                        f" {base.name}. Trigger words are listed on each version.</p>",
            type=model_type, status=status, availability="Public", mode=mode,
            checkpoint_type=(rng.choice(("Standard", "Merge", "Merge", "Trained")) if model_type == "Checkpoint"
                             else None),
            from_platform=int(trained), nsfw=int(bool(nsfw_level & 28)), nsfw_level=nsfw_level or 1,
            supports_generation=supports_generation, allow_no_credit=int(rng.random() < 0.7),
            allow_commercial_use=commercial, allow_derivatives=int(rng.random() < 0.85),
            allow_different_license=int(rng.random() < 0.6), minor=int(forced.get("minor", False)),
            poi=int(forced.get("poi", False)), sfw_only=int(forced.get("sfw_only", False)),
            created_at=ts(created), updated_at=ts(max([created] + [v["updated_ts"] for v in versions])),
            published_at=ts(min(v["published_ts"] for v in published)) if published and status != "Draft" else None,
            last_version_at=ts(last) if last else None,
        )
        self._model_metrics(model_id, created)
        for tag_id in self.pick_tags("model", 1, 4) + self.pick_tags("model_category", 0, 1):
            self.sink.add("model_tags", model_id=model_id, tag_id=tag_id)

    def make_new_kinds(self) -> None:
        """One published model of each newer ModelType (NEW_KIND_MODELS), with its files and showcase posts.

        Made last, so every row the seed made before keeps its values and ids.
        """
        rng = self.rng
        bases = {b.name: b for b in facts.BASE_MODELS}
        for model_type, base_name, kind_files in NEW_KIND_MODELS:
            owner = rng.choice(self.creators)
            created = self.when(owner["created"] + DAY)
            model = {"id": self.next_id("model"), "type": model_type, "owner": owner, "status": "Published",
                     "mode": None, "base": bases[base_name], "name": self.model_name(model_type), "created": created,
                     "forced": {"type": model_type}, "kind_files": kind_files}
            self.models.append(model)
            versions = self._make_versions(model)
            self._model_row(model, versions)
            for version in versions:
                if version["published_at"] is not None:
                    self._post(owner, version, count=rng.randint(2, 4))
            self.landmarks["models_by_type"].setdefault(model_type, model["id"])

    def _model_metrics(self, model_id: int, created: int) -> None:
        rng = self.rng
        age_days = max(1, (ANCHOR_TS - created) // DAY)
        downloads = int(rng.paretovariate(1.2) * 40)
        base = {"download_count": downloads, "thumbs_up_count": downloads // rng.randint(4, 12),
                "thumbs_down_count": downloads // rng.randint(80, 400), "comment_count": downloads // rng.randint(30, 90),
                "collected_count": downloads // rng.randint(6, 20), "tipped_amount_count": rng.randint(0, 50) * 10}
        previous = base
        for period, window in (("AllTime", age_days), ("Year", 365), ("Month", 30), ("Week", 7), ("Day", 1)):
            # A shorter window never counts more than a longer one.
            share = min(1.0, window / age_days) * rng.uniform(0.6, 1.0)
            values = base if period == "AllTime" else {k: min(int(v * share), previous[k]) for k, v in base.items()}
            self.sink.add("model_metrics", model_id=model_id, period=period, **values)
            previous = values

    def _make_versions(self, model: dict[str, Any]) -> list[dict[str, Any]]:
        rng = self.rng
        forced = model["forced"]
        count = 1 + (rng.random() < 0.45) + (rng.random() < 0.2)
        if forced.get("epoch") or forced.get("unpublished_version") or forced.get("early_access"):
            count = max(count, 2)
        versions: list[dict[str, Any]] = []
        when = model["created"]
        numbers = list(range(count, 0, -1))  # position 0 = newest
        stamps = sorted(self.when(when, ANCHOR_TS - 2 * DAY) for _ in range(count))[::-1]
        for position, (number, created) in enumerate(zip(numbers, stamps)):
            version_id = self.next_id("version")
            base = model["base"] if position == count - 1 or rng.random() < 0.8 else rng.choice(SEED_BASE_MODELS)
            status = "Published" if model["status"] in ("Published",) else model["status"]
            availability = "Public"
            upload_type = "Created"
            early_config = None
            early_ends = None
            training_status = None
            training_details = None
            require_auth = int(forced.get("require_auth", False) or rng.random() < 0.03)
            epochs = 0
            newest = position == 0
            if newest and forced.get("early_access"):
                availability = "EarlyAccess"
                timeframe = rng.choice((3, 5, 7, 14))
                early_config = {"timeframe": timeframe, "chargeForDownload": True, "downloadPrice": 500,
                                "chargeForGeneration": True, "generationPrice": 100, "generationTrialLimit": 10,
                                "donationGoalEnabled": False, "originalPublishedAt": ts(created)}
                early_ends = (EARLY_ACCESS_ACTIVE_UNTIL_TS if forced["early_access"] == "active"
                              else created + timeframe * DAY)
                require_auth = 1
            elif newest and forced.get("epoch"):
                availability = "Private"
                upload_type = "Trained"
                training_status = "InReview"
                epochs = rng.randint(5, 10)
            elif newest and forced.get("unpublished_version"):
                status = "Unpublished"
            elif status == "Published" and not forced and rng.random() < 0.05:
                status = rng.choice(("Draft", "Unpublished", "Scheduled"))
            elif status == "Published" and not forced and rng.random() < 0.03:
                availability = "EarlyAccess"
                early_config = {"timeframe": 7, "chargeForDownload": True, "downloadPrice": 300,
                                "chargeForGeneration": False, "donationGoalEnabled": False}
                early_ends = rng.choice((EARLY_ACCESS_ACTIVE_UNTIL_TS, created + 7 * DAY))
                require_auth = 1
            if upload_type == "Created" and model["type"] in ("LORA", "LoCon", "DoRA") and rng.random() < 0.15:
                upload_type = "Trained"
                training_status = rng.choice(("Approved", "Approved", "Approved", "Failed"))
            if upload_type == "Trained":
                training_details = {"type": rng.choice(("Character", "Style", "Concept")),
                                    "baseModel": base.ecosystem, "params": {"epochs": epochs or 10,
                                    "numRepeats": rng.randint(5, 20), "trainBatchSize": 4, "resolution": 1024,
                                    "unetLR": 0.0005, "networkDim": 32}}
            published_ts = created + rng.randint(600, 3 * DAY) if status == "Published" else None
            if availability == "Private":
                published_ts = None  # a training result: never published
            nsfw_level = rng.choice((1, 1, 1, 3, 7, 15, 31))
            trained = [f"{model['name'].split()[0].lower()}{rng.choice(('', '_style', 'style', ' woman'))}"]
            if rng.random() < 0.3:
                trained.append(rng.choice(words.STYLES).lower())
            version = {
                "id": version_id, "model": model, "base": base, "status": status, "availability": availability,
                "published_at": ts(published_ts) if published_ts else None,
                "published_ts": published_ts or created, "updated_ts": (published_ts or created) + 3600,
                "nsfw_level": nsfw_level, "upload_type": upload_type, "created": created,
                "name": f"v{number}.0" if rng.random() < 0.7 else f"v{number}.{rng.randint(1, 9)}",
                "early_ends": early_ends, "epochs": epochs,
            }
            self.sink.add(
                "model_versions", id=version_id, model_id=model["id"], position=position, name=version["name"],
                description=(f"<p>Changes in {version['name']}: cleaner {rng.choice(words.NOUNS).lower()} details."
                             "</p>") if rng.random() < 0.7 else None,
                base_model=base.name, base_model_type="Standard" if rng.random() < 0.95 else
                rng.choice(facts.BASE_MODEL_TYPES[1:]),
                air_ecosystem=base.ecosystem, air_type=facts.AIR_TYPES[model["type"]], air_source=facts.AIR_SOURCE,
                status=status, availability=availability, nsfw_level=nsfw_level, upload_type=upload_type,
                usage_control=forced.get("usage_control") or ("Download" if rng.random() < 0.9 else
                                                              rng.choice(("Generation", "InternalGeneration"))),
                trained_words=orjson.dumps(trained if model["type"] in ("LORA", "LoCon", "DoRA",
                                                                        "TextualInversion") else []).decode(),
                early_access_config=orjson.dumps(early_config).decode() if early_config else None,
                early_access_ends_at=ts(early_ends) if early_ends else None,
                training_status=training_status,
                training_details=orjson.dumps(training_details).decode() if training_details else None,
                require_auth=require_auth,
                free_trial_limit=early_config.get("generationTrialLimit") if early_config else None,
                additional_resource_charge=int(forced.get("resource_charge", False)
                                               or (model["type"] == "Checkpoint" and rng.random() < 0.05)),
                is_featured=int(rng.random() < 0.03),
                supports_generation=int(base.active and model["type"] in ("Checkpoint", "LORA", "LoCon", "DoRA",
                                                                          "TextualInversion", "VAE")),
                clip_skip=2 if base.name in ("Pony", "Illustrious", "NoobAI") else None,
                download_count=rng.randint(0, 5000), thumbs_up_count=rng.randint(0, 800),
                thumbs_down_count=rng.randint(0, 20), created_at=ts(created), updated_at=ts(version["updated_ts"]),
                published_at=version["published_at"],
            )
            self._make_files(version, every=bool(forced.get("every_file")) and newest)
            versions.append(version)
            self.versions.append(version)
            if (status == "Published" and availability == "Public" and model["status"] == "Published"
                    and model["mode"] is None):
                self.public_versions.append(version)
                if model["type"] == "LORA":
                    self.lora_versions.append(version)
            self._version_landmarks(version)
        return versions

    def _version_landmarks(self, version: dict[str, Any]) -> None:
        model = version["model"]
        if version["availability"] == "EarlyAccess" and "early_access_version" not in self.landmarks \
                and version["early_ends"] == EARLY_ACCESS_ACTIVE_UNTIL_TS and model["status"] == "Published":
            self.landmarks["early_access_version"] = {"id": version["id"], "model_id": model["id"],
                                                      "ends_at": ts(version["early_ends"])}
        if version["availability"] == "EarlyAccess" and "ended_early_access_version" not in self.landmarks \
                and version["early_ends"] != EARLY_ACCESS_ACTIVE_UNTIL_TS:
            self.landmarks["ended_early_access_version"] = {"id": version["id"], "model_id": model["id"],
                                                            "ends_at": ts(version["early_ends"])}
        if version["epochs"] and "private_epoch_version" not in self.landmarks:
            self.landmarks["private_epoch_version"] = {
                "id": version["id"], "model_id": model["id"], "epochs": list(range(1, version["epochs"] + 1)),
                "last_epoch": version["epochs"], "owner_id": model["owner"]["id"]}
        if version["status"] == "Unpublished" and model["status"] == "Published" \
                and "unpublished_version" not in self.landmarks:
            self.landmarks["unpublished_version"] = {"id": version["id"], "model_id": model["id"]}
        if version["status"] == "Published" and version["availability"] == "Public" \
                and model["status"] == "Published" and model["mode"] is None \
                and "public_version" not in self.landmarks:
            self.landmarks["public_version"] = {"id": version["id"], "model_id": model["id"]}

    # --- files ----------------------------------------------------------------------------

    def _make_files(self, version: dict[str, Any], *, every: bool) -> None:
        rng = self.rng
        model = version["model"]
        model_type = model["type"]
        slug = "".join(ch for ch in model["name"].replace(" ", "_") if ch.isalnum() or ch == "_")[:40]
        files: list[dict[str, Any]] = []

        def add(file_type: str, name: str, size_kb: float, fmt: str | None, size: str | None, fp: str | None,
                *, primary: bool = False, epoch: int | None = None, visibility: str = "Public") -> None:
            files.append({"type": file_type, "name": name, "size_kb": round(size_kb, 3), "format": fmt, "size": size,
                          "fp": fp, "primary": primary, "epoch": epoch, "visibility": visibility})

        vname = version["name"]
        if model.get("kind_files"):
            for file_type, suffix, (low, high), fmt, fp, primary in model["kind_files"]:
                add(file_type, f"{slug}_{vname}{suffix}", rng.uniform(low, high), fmt, None, fp, primary=primary)
        elif version["epochs"]:
            for epoch in range(1, version["epochs"] + 1):
                add("Model", f"{slug}-{epoch:06d}.safetensors", rng.uniform(18_000, 220_000), "SafeTensor", "full",
                    "fp16", primary=epoch == version["epochs"], epoch=epoch)
        elif model_type == "Checkpoint":
            add("Model", f"{slug}_{vname}_pruned.safetensors", rng.uniform(2_000_000, 6_900_000), "SafeTensor",
                "pruned", "fp16", primary=True)
            if every or rng.random() < 0.35:
                add("Model", f"{slug}_{vname}_full.safetensors", rng.uniform(4_000_000, 7_200_000), "SafeTensor",
                    "full", "fp32")
            if every or rng.random() < 0.1:
                add("Pruned Model", f"{slug}_{vname}_pruned.ckpt", rng.uniform(2_000_000, 4_200_000), "PickleTensor",
                    "pruned", "fp16")
            if every or rng.random() < 0.15:
                add("VAE", f"{slug}_vae.safetensors", rng.uniform(80_000, 330_000), "SafeTensor", None, "fp16")
            if every or rng.random() < 0.1:
                add("Config", f"{slug}.yaml", rng.uniform(1, 4), "Other", None, None)
            if every or rng.random() < 0.08:
                add("Text Encoder", f"{slug}_t5xxl_fp8.safetensors", rng.uniform(4_000_000, 5_000_000), "SafeTensor",
                    None, "fp8")
            if every:
                add("Training Data", f"{slug}_dataset.zip", rng.uniform(50_000, 900_000), "Other", None, None,
                    visibility="Private")
                add("Negative", f"{slug}_neg.safetensors", rng.uniform(4, 60), "SafeTensor", None, None)
                add("Archive", f"{slug}_extras.zip", rng.uniform(100, 5_000), "Other", None, None)
        elif model_type in ("LORA", "LoCon", "DoRA"):
            add("Model", f"{slug}_{vname}.safetensors", rng.uniform(9_000, 450_000), "SafeTensor", None,
                rng.choice(("fp16", "bf16", "fp32")), primary=True)
            if rng.random() < 0.2:
                add("Training Data", f"{slug}_dataset.zip", rng.uniform(20_000, 600_000), "Other", None, None,
                    visibility="Private" if rng.random() < 0.5 else "Public")
        elif model_type == "TextualInversion":
            add("Model", f"{slug}.safetensors", rng.uniform(4, 250), "SafeTensor", None, None, primary=True)
            if rng.random() < 0.4:
                add("Negative", f"{slug}_neg.safetensors", rng.uniform(4, 120), "SafeTensor", None, None)
        elif model_type in ("Poses", "Wildcards", "Workflows", "Other"):
            add("Archive", f"{slug}.zip", rng.uniform(5, 90_000), "Other", None, None, primary=True)
        else:
            fmt = "PickleTensor" if model_type in ("Hypernetwork", "AestheticGradient", "Upscaler") else "SafeTensor"
            ext = "pt" if fmt == "PickleTensor" else "safetensors"
            add("Model", f"{slug}.{ext}", rng.uniform(1_000, 1_800_000), fmt, None, "fp16", primary=True)
        version["files"] = []
        for spec in files:
            file_id = self.next_id("file")
            roll = rng.random()
            pickle = "Success" if roll < 0.96 else ("Pending" if roll < 0.98 else rng.choice(("Danger", "Error")))
            size_kb, hashes = self._file_content(file_id, version, spec)
            self.sink.add(
                "model_files", id=file_id, version_id=version["id"], name=spec["name"], type=spec["type"],
                size_kb=size_kb, format=spec["format"], size=spec["size"], fp=spec["fp"],
                pickle_scan_result=pickle, virus_scan_result="Pending" if pickle == "Pending" else "Success",
                scanned_at=None if pickle == "Pending" else ts(version["created"] + 600),
                visibility=spec["visibility"], is_primary=int(spec["primary"]), epoch=spec["epoch"],
                created_at=ts(version["created"]),
            )
            # The draws the made-up hashes took before hashes were computed from the bytes: kept,
            # so that every row after this one stays what it was for a seed.
            for bits in (256, 32, 48, 32, 256):
                rng.getrandbits(bits)
            if rng.random() < 0.1 and not every:  # older uploads were hashed with fewer algorithms
                hashes = {k: v for k, v in hashes.items() if k in ("AutoV2", "SHA256", "CRC32")}
            for kind, value in hashes.items():
                self.add_file_hash(file_id, kind, value)
            version["files"].append({"id": file_id, "name": spec["name"], "size_kb": size_kb,
                                     "visibility": spec["visibility"]})
            if "known_hashes" not in self.landmarks and len(hashes) == 6 and self._listed(version, spec):
                self.landmarks["known_hashes"] = {"file_id": file_id, "version_id": version["id"],
                                                  "model_id": model["id"], **hashes}

    @staticmethod
    def _listed(version: dict[str, Any], spec: dict[str, Any]) -> bool:
        """A public file of a published public version of a healthy published model."""
        model = version["model"]
        return (version["status"] == "Published" and version["availability"] == "Public"
                and model["status"] == "Published" and model["mode"] is None and spec["visibility"] == "Public")

    def _file_content(self, file_id: int, version: dict[str, Any],
                      spec: dict[str, Any]) -> tuple[float, dict[str, str]]:
        """The file's size in KB and its hashes, from the bytes a download serves (blockkit.emulator.services.files).

        The first listed primary safetensors file is made a little over 2 MiB, so that the
        ``known_hashes`` landmark has all six kinds (AutoV1 needs 2 MiB); every other file is a few KiB.
        """
        large = ("known_hashes" not in self.landmarks and spec["primary"] and spec["format"] == "SafeTensor"
                 and self._listed(version, spec))
        length = files.planned_length(self.file_seed, file_id, spec["name"], spec["format"], spec["size_kb"],
                                      large=large)
        recipe = files.Recipe(self.file_seed, file_id, spec["name"], spec["format"], spec["fp"], length)
        return length / 1024, files.recipe_hashes(recipe, files.file_bytes(recipe))

    # --- posts and images -----------------------------------------------------------------

    def make_posts(self) -> None:
        rng = self.rng
        creator = self.landmarks["creator"]["id"]
        big_version = self.public_versions[0]
        # The big post first: its first images are forced into every state an image can be in.
        self._forced_images = [
            *({"nsfw_level": level} for level in (1, 2, 4, 8, 16, 32)),
            {"nsfw_level": 0, "landmark": "unscanned_image"},
            {"type": "video", "thumbnail": 4, "nsfw_level": 1, "landmark": "video_with_custom_thumbnail"},
            {"type": "video", "thumbnail": 1, "nsfw_level": 2, "landmark": "video_with_safe_custom_thumbnail"},
            {"type": "video", "thumbnail": None, "nsfw_level": 1, "landmark": "video_without_thumbnail"},
            {"type": "audio", "nsfw_level": 1, "landmark": "audio"},
            {"type": "image", "meta": True, "nsfw_level": 1, "landmark": "image_with_meta"},
            {"type": "image", "meta": False, "nsfw_level": 1, "landmark": "image_without_meta"},
        ]
        big = self._post(self.user_by_id(creator), big_version, count=self.spec.big_post_images,
                         title="Showcase: a hundred and more renders")
        self.landmarks["big_post"] = {"id": big["id"], "image_count": self.spec.big_post_images,
                                      "model_version_id": big_version["id"]}
        for key, overrides in (("unlisted_post", {"availability": "Unlisted"}),
                               ("private_post", {"availability": "Private"}),
                               ("unpublished_post", {"published": False}),
                               ("blocked_post", {"blocked": True}),
                               ("unscanned_post", {"scanned": False}),
                               ("mature_post", {"levels": (8,)})):
            owner = rng.choice(self.creators)
            post = self._post(owner, rng.choice(self.public_versions), count=3, **overrides)
            self.landmarks[key] = {"id": post["id"], "image_ids": post["image_ids"]}
        # Every version's showcase post by its creator.
        for version in self.versions:
            model = version["model"]
            if model["status"] == "Deleted":
                continue
            availability = {"EarlyAccess": "EarlyAccess", "Private": "Private"}.get(version["availability"], "Public")
            if availability == "Public" and rng.random() < 0.05:
                availability = "Unlisted"
            post = self._post(model["owner"], version, count=rng.randint(2, self.spec.max_images_per_post),
                              availability=availability, published=version["published_at"] is not None)
            if availability == "EarlyAccess" and "early_access_post" not in self.landmarks \
                    and version["id"] == self.landmarks.get("early_access_version", {}).get("id"):
                self.landmarks["early_access_post"] = {"id": post["id"], "image_ids": post["image_ids"],
                                                       "model_version_id": version["id"]}
        # Community posts: other people's renders, some tied to a version.
        for _ in range(self.spec.community_posts):
            user = rng.choice(self.users)
            version = rng.choice(self.public_versions) if rng.random() < 0.6 else None
            roll = rng.random()
            overrides: dict[str, Any] = {}
            if roll < 0.04:
                overrides = {"published": False}
            elif roll < 0.07:
                overrides = {"availability": "Unlisted"}
            elif roll < 0.08:
                overrides = {"blocked": True}
            self._post(user, version, count=rng.randint(1, self.spec.max_images_per_post + 3), **overrides)

    def user_by_id(self, user_id: int) -> dict[str, Any]:
        return self.users[user_id - 1]  # users are made with ids 1, 2, ... in order

    def _post(self, user: dict[str, Any], version: dict[str, Any] | None, *, count: int,
              availability: str = "Public", published: bool = True, blocked: bool = False, scanned: bool = True,
              title: str | None = None, levels: tuple[int, ...] | None = None) -> dict[str, Any]:
        rng = self.rng
        post_id = self.next_id("post")
        after = max(user["created"], version["published_ts"] if version else user["created"])
        created = self.when(after + 60)
        image_ids = []
        nsfw = 0
        for position in range(count):
            image_id, level = self._image(user, post_id, position, created + position, version, levels)
            image_ids.append(image_id)
            nsfw |= level
            if availability == "Public" and published and not blocked and scanned:
                self.public_images.append(image_id)
        if title is None and rng.random() < 0.6:
            title = f"{rng.choice(words.ADJECTIVES)} {rng.choice(words.NOUNS).lower()}"
            if version:
                title += f" with {version['model']['name']}"
        self.sink.add(
            "posts", id=post_id, user_id=user["id"], title=title,
            detail=f"<p>Made in {rng.choice(words.SCENES)}.</p>" if rng.random() < 0.3 else None,
            model_version_id=version["id"] if version else None, availability=availability, nsfw_level=nsfw,
            scanned=int(scanned), blocked=int(blocked), created_at=ts(created), updated_at=ts(created + 120),
            published_at=ts(created + 60) if published else None,
        )
        for tag_id in self.pick_tags("post", 0, 2):
            self.sink.add("post_tags", post_id=post_id, tag_id=tag_id)
        post = {"id": post_id, "image_ids": image_ids}
        self.posts.append(post)
        return post

    def _image(self, user: dict[str, Any], post_id: int | None, position: int | None, created: int,
               version: dict[str, Any] | None, levels: tuple[int, ...] | None = None,
               image_type: str | None = None) -> tuple[int, int]:
        rng = self.rng
        forced = self._forced_images.pop(0) if self._forced_images and post_id is not None else {}
        image_id = self.next_id("image")
        video_base = version is not None and version["base"].kind == "video"
        if image_type is None:
            image_type = forced.get("type")
        if image_type is None:
            roll = rng.random()
            image_type = ("video" if roll < 0.85 else "image") if video_base else \
                ("image" if roll < 0.93 else ("video" if roll < 0.98 else "audio"))
        level = forced.get("nsfw_level", rng.choice(levels) if levels else _weighted(rng, IMAGE_LEVEL_WEIGHTS))
        uid = self.uid()
        width = height = None
        duration = None
        thumb: dict[str, Any] = {}
        if image_type == "image":
            width, height = rng.choice(IMAGE_SIZES)
            url = f"{MEDIA}/{uid}.jpeg"
        elif image_type == "video":
            width, height = rng.choice(VIDEO_SIZES)
            duration = round(rng.uniform(2, 12), 2)
            url = f"{MEDIA}/{uid}.mp4"
            thumb_level = forced["thumbnail"] if "thumbnail" in forced else rng.choice((None, None, 1, 1, 2, 4, 8))
            if thumb_level is not None:
                thumb = {"thumbnail_url": f"{MEDIA}/{self.uid()}.webp", "thumbnail_nsfw_level": thumb_level,
                         "thumbnail_width": width, "thumbnail_height": height}
        else:
            duration = round(rng.uniform(5, 180), 2)
            url = f"{MEDIA}/{uid}.mp3"
        resources = self._resources(version) if image_type != "audio" else []
        with_meta = forced.get("meta", image_type != "audio" and rng.random() < 0.7)
        meta_json = None
        if with_meta:
            meta_json = orjson.dumps(self._meta(width, height, resources)).decode()
        base_model = version["base"].name if version else (rng.choice(SEED_BASE_MODELS).name
                                                           if rng.random() < 0.5 else None)
        self.add_image(  # in IMAGE_COLUMNS order
            image_id, user["id"], post_id, position, image_type, url, f"{uid[:8]}.{url.rsplit('.', 1)[1]}",
            self.blurhash() if image_type != "audio" else None, width, height, duration, level,
            ts(created + 30) if level else None, meta_json, base_model, thumb.get("thumbnail_url"),
            thumb.get("thumbnail_nsfw_level"), thumb.get("thumbnail_width"), thumb.get("thumbnail_height"),
            ts(created),
        )
        for resource in resources:
            self.add_image_resource(image_id, resource["modelVersionId"], resource["type"], resource.get("weight"))
        for tag_id in self.pick_tags("image", 0, 3):
            self.add_image_tag(image_id, tag_id)
        self._image_metrics(image_id, created)
        if forced.get("landmark"):
            entry: dict[str, Any] = {"id": image_id, "post_id": post_id, "type": image_type, "nsfw_level": level}
            if thumb:
                entry["thumbnail_nsfw_level"] = thumb["thumbnail_nsfw_level"]
            self.landmarks[forced["landmark"]] = entry
        if "nsfw_level" in forced and "landmark" not in forced:
            self.landmarks.setdefault("images_by_nsfw_level", {})[str(level)] = image_id
        return image_id, level

    def _resources(self, version: dict[str, Any] | None) -> list[dict[str, Any]]:
        rng = self.rng
        chosen: list[dict[str, Any]] = []
        if version is not None:
            chosen.append(version)
        if self.lora_versions and rng.random() < 0.5:
            chosen.extend(rng.sample(self.lora_versions, min(len(self.lora_versions), rng.randint(1, 2))))
        out: list[dict[str, Any]] = []
        seen: set[int] = set()
        for item in chosen:
            if item["id"] in seen:
                continue
            seen.add(item["id"])
            kind = RESOURCE_TYPES.get(item["model"]["type"], "other")
            entry: dict[str, Any] = {"type": kind, "modelVersionId": item["id"]}
            if kind not in ("checkpoint", "vae", "upscaler"):
                entry["weight"] = round(rng.uniform(0.4, 1.0), 2)
            out.append(entry)
        return out

    def _meta(self, width: int | None, height: int | None, resources: list[dict[str, Any]]) -> dict[str, Any]:
        rng = self.rng
        prompt = (f"{rng.choice(words.SUBJECTS).lower()} in {rng.choice(words.SCENES)}, "
                  + ", ".join(rng.sample(words.PROMPT_EXTRAS, 3)))
        meta_obj: dict[str, Any] = {
            "prompt": prompt,
            "negativePrompt": ", ".join(rng.sample(words.NEGATIVE, 3)),
            "seed": rng.getrandbits(32),
            "steps": rng.choice((20, 25, 28, 30, 40)),
            "sampler": rng.choice(words.SAMPLERS),
            "cfgScale": rng.choice((3.5, 5, 6, 7, 7.5)),
            "clipSkip": rng.choice((1, 2)),
        }
        if width and height:
            meta_obj["Size"] = f"{width}x{height}"
        if resources:
            meta_obj["resources"] = [{"name": f"resource-{r['modelVersionId']}", "type": r["type"],
                                      **({"weight": r["weight"]} if "weight" in r else {})} for r in resources]
            meta_obj["civitaiResources"] = resources  # the platform's key (image.schema.ts); the spec says platformResources
        return meta_obj

    def _image_metrics(self, image_id: int, created: int) -> None:
        age_days = max(1, (ANCHOR_TS - created) // DAY)
        likes = int(self.rng.paretovariate(1.3) * 6)
        bits = self.rng.getrandbits(40)
        counts = (bits % (likes // 8 + 2), (bits >> 8) % (likes // 6 + 2), likes, (bits >> 16) % 3,
                  likes // (2 + (bits >> 20) % 5), (bits >> 24) % (likes // 5 + 2), (bits >> 32) % (likes // 4 + 2))
        add = self.add_image_metrics
        for period, window in (("AllTime", age_days), ("Year", 365), ("Month", 30), ("Week", 7), ("Day", 1)):
            # Windows shrink, so each period counts at most what the longer one did.
            share = min(1.0, window / age_days)
            cry, laugh, like, dislike, heart, comment, collected = (
                counts if share == 1.0 else [int(c * share) for c in counts])
            add(image_id, period, cry, laugh, like, dislike, heart, comment, collected,
                cry + laugh + like + dislike + heart)

    # --- articles -------------------------------------------------------------------------

    def make_articles(self) -> None:
        rng = self.rng
        forced = (("published_article", "Published", "Public", True), ("draft_article", "Draft", "Public", True),
                  ("unpublished_article", "Unpublished", "Public", True),
                  ("private_article", "Published", "Private", True),
                  ("unscanned_article", "Published", "Public", False))
        for index in range(self.spec.articles):
            role, status, availability, scanned = forced[index] if index < len(forced) else (
                "", "Published" if rng.random() < 0.85 else rng.choice(("Draft", "Unpublished")),
                "Public" if rng.random() < 0.95 else "Private", rng.random() < 0.97)
            author = rng.choice(self.creators)
            article_id = self.next_id("article")
            created = self.when(author["created"] + DAY)
            cover = None
            level = 1
            if index == 0 or rng.random() < 0.8:
                cover, level = self._image(author, None, None, created, None, image_type="image")
            title = rng.choice(words.ARTICLE_TITLES).format(style=rng.choice(words.STYLES),
                                                          noun=rng.choice(words.NOUNS))
            views = int(rng.paretovariate(1.2) * 100)
            likes = views // rng.randint(5, 20)
            self.sink.add(
                "articles", id=article_id, user_id=author["id"], title=title,
                content=(f"<h2>{title}</h2><p>{rng.choice(words.SCENES).capitalize()} was the starting point."
                         f" {rng.choice(words.PROMPT_EXTRAS).capitalize()} does most of the work.</p>"),
                cover_image_id=cover, status=status, availability=availability, nsfw_level=level or 1,
                user_nsfw_level=level or 1, moderator_nsfw_level=level if rng.random() < 0.1 else None,
                scanned_at=ts(created + 60) if scanned else None, favorite_count=likes // 2,
                collected_count=likes // 3, comment_count=likes // 4, like_count=likes, heart_count=likes // 3,
                view_count=views, tipped_amount_count=rng.randint(0, 20) * 5,
                reaction_count=likes + likes // 3, created_at=ts(created), updated_at=ts(created + 7200),
                published_at=ts(created + 3600) if status == "Published" else None,
            )
            for tag_id in self.pick_tags("article", 0, 3) + self.pick_tags("article_category", 1, 1):
                self.sink.add("article_tags", article_id=article_id, tag_id=tag_id)
            if role:
                self.landmarks[role] = {"id": article_id, "user_id": author["id"], "cover_image_id": cover}
            if status == "Published" and availability == "Public" and scanned:
                self.articles.append(article_id)

    # --- collections ------------------------------------------------------------------------

    def make_collections(self) -> None:
        rng = self.rng
        self.landmarks["collections"] = {}
        # What each collection type can hold (drawn from for every collection).
        self._collectable = {
            "Model": [m["id"] for m in self.models if m["status"] == "Published"],
            "Image": self.public_images,
            "Article": self.articles,
            "Post": [p["id"] for p in self.posts],
        }
        combos = [(kind, read) for kind in facts.COLLECTION_TYPES for read in facts.COLLECTION_READ]
        total = max(self.spec.collections, len(combos))
        for index in range(total):
            kind, read = combos[index] if index < len(combos) else (
                rng.choice(facts.COLLECTION_TYPES), "Public" if rng.random() < 0.8 else rng.choice(("Private",
                                                                                                    "Unlisted")))
            owner = rng.choice(self.users)
            collection_id = self._collection(owner, kind, read, None, first=index == 0)
            if index < len(combos):
                self.landmarks["collections"][f"{kind}/{read}"] = collection_id
        # Favorites: a Bookmark collection of models per some users (always the member).
        member = self.landmarks["member"]["id"]
        for user in self.users:
            if user["id"] == member or rng.random() < 0.25:
                collection_id = self._collection(user, "Model", "Private", "Bookmark")
                if user["id"] == member:
                    self.landmarks["favorites_collection"] = {"id": collection_id, "user_id": member}

    def _collection(self, owner: dict[str, Any], kind: str, read: str, mode: str | None, first: bool = False) -> int:
        rng = self.rng
        collection_id = self.next_id("collection")
        created = self.when(owner["created"] + DAY)
        if mode == "Bookmark":
            name, description = "Favorite Models", None
        else:
            name = rng.choice(words.COLLECTION_NAMES).format(adj=rng.choice(words.ADJECTIVES),
                                                            style=rng.choice(words.STYLES), noun=rng.choice(words.NOUNS))
            description = f"{kind}s I keep coming back to." if rng.random() < 0.6 else None
        pool = self._collectable[kind]
        items = rng.sample(pool, min(len(pool), rng.randint(2, 12)))
        column = {"Model": "model_id", "Image": "image_id", "Article": "article_id", "Post": "post_id"}[kind]
        for position, item in enumerate(items):
            status = "ACCEPTED"
            if first and position < 2:
                status = ("REVIEW", "REJECTED")[position]
            elif rng.random() < 0.06:
                status = rng.choice(("REVIEW", "REJECTED"))
            self.sink.add("collection_items", id=self.next_id("collection_item"), collection_id=collection_id,
                          kind=kind.lower(), status=status, added_by_id=owner["id"],
                          created_at=ts(created + 60 * (position + 1)), **{column: item})
        cover = None
        if kind == "Image" and items:
            cover = items[-1]
        elif self.public_images and rng.random() < 0.5:
            cover = rng.choice(self.public_images)
        self.sink.add("collections", id=collection_id, user_id=owner["id"], name=name, description=description,
                      type=kind, read=read, write="Private" if rng.random() < 0.8 else rng.choice(("Public", "Review")),
                      mode=mode, cover_image_id=cover, nsfw_level=rng.choice((1, 1, 1, 3, 7)),
                      follower_count=int(rng.paretovariate(1.5) * 3), created_at=ts(created),
                      updated_at=ts(created + 3600))
        for tag_id in self.pick_tags("collection", 0, 2):
            self.sink.add("collection_tags", collection_id=collection_id, tag_id=tag_id)
        return collection_id

    # --- per-user state: hidden models, purchases, vaults -----------------------------------

    def make_user_state(self) -> None:
        rng = self.rng
        member = self.landmarks["member"]["id"]
        published = [m for m in self.models if m["status"] == "Published" and m["mode"] is None]
        for user in self.users:
            if user["id"] == member or rng.random() < 0.1:
                for model in rng.sample(published, min(len(published), rng.randint(1, 3))):
                    self.sink.add("hidden_models", user_id=user["id"], model_id=model["id"],
                                  created_at=ts(self.when(max(user["created"], model["created"]))))
                    if user["id"] == member and "hidden_model" not in self.landmarks:
                        self.landmarks["hidden_model"] = {"user_id": member, "model_id": model["id"]}
        self._vaultable = [v for v in self.versions if v["model"]["status"] == "Published"
                           and v["status"] == "Published"]
        self._deleted_versions = [v for v in self.versions if v["model"]["status"] == "Deleted"][:1]
        early = self.landmarks["early_access_version"]["id"]
        buyers = [member] + [u["id"] for u in rng.sample(self.users, min(len(self.users), 3)) if u["id"] != member]
        for buyer in buyers:
            self.sink.add("early_access_purchases", user_id=buyer, version_id=early, buzz_amount=500,
                          purchased_at=ts(ANCHOR_TS - 3 * DAY))
        self.landmarks["early_access_purchase"] = {"user_id": member, "version_id": early}
        for user in self.users:
            if user["tier"] in facts.MEMBER_TIERS and not user["deleted"] and (user["id"] == member
                                                                              or rng.random() < 0.5):
                self._vault(user, every_status=user["id"] == member)

    def _vault(self, user: dict[str, Any], *, every_status: bool) -> None:
        rng = self.rng
        created = self.when(user["created"] + DAY)
        self.sink.add("vaults", user_id=user["id"], storage_kb=facts.VAULT_STORAGE_KB[user["tier"]],
                      meta="{}", created_at=ts(created), updated_at=ts(created + DAY))
        candidates = self._vaultable
        if every_status:  # one item per status, and one whose original was deleted since
            deleted = self._deleted_versions
            chosen = rng.sample(candidates, 4) + deleted
            statuses = ["Pending", "Stored", "Failed", "Stored"] + ["Stored"] * len(deleted)
        else:
            chosen = rng.sample(candidates, min(len(candidates), rng.randint(2, 6)))
            statuses = [_weighted(rng, {"Stored": 8, "Pending": 1, "Failed": 1}) for _ in chosen]
        for version, status in zip(chosen, statuses):
            item_id = self.next_id("vault_item")
            model = version["model"]
            files = [f for f in version["files"] if f["visibility"] == "Public"]
            model_kb = int(sum(f["size_kb"] for f in files))
            added = self.when(max(created, version["created"]))
            self.sink.add(
                "vault_items", id=item_id, vault_id=user["id"], status=status, model_version_id=version["id"],
                model_id=model["id"], model_name=model["name"], version_name=version["name"],
                creator_id=model["owner"]["id"], creator_name=model["owner"]["username"], type=model["type"],
                base_model=version["base"].name, category=rng.choice(words.MODEL_CATEGORY_TAGS + ("",)),
                model_size_kb=model_kb if status == "Stored" else 0, details_size_kb=rng.randint(4, 40),
                images_size_kb=rng.randint(200, 4000) if status == "Stored" else 0, created_at=ts(version["created"]),
                added_at=ts(added), refreshed_at=ts(added + DAY) if status == "Stored" and rng.random() < 0.3 else None,
                notes="for the weekend project" if rng.random() < 0.2 else None,
                meta=orjson.dumps({"failures": 3 if status == "Failed" else 0}).decode(),
                cover_image_url=f"{MEDIA}/vault/{self.uid()}.jpeg" if status != "Pending" else None,
            )
            if status == "Stored":
                for f in files:
                    self.sink.add("vault_item_files", id=f["id"], vault_item_id=item_id, size_kb=float(f["size_kb"]),
                                  url=f"/__emulator/vault/{user['id']}/{item_id}/{f['id']}", display_name=f["name"])
            if every_status:
                key = "deleted_original" if model["status"] == "Deleted" else status
                self.landmarks.setdefault("vault_items", {})[key] = {"id": item_id, "user_id": user["id"],
                                                                     "model_version_id": version["id"]}

    def run(self) -> dict[str, Any]:
        self.make_users()
        self.make_tags()
        self.make_models()
        self.make_posts()
        self.make_articles()
        self.make_collections()
        self.make_user_state()
        self.make_new_kinds()
        self.sink.flush_all()
        return self.landmarks


def generate(store: Store, seed: int, scale: str) -> dict[str, int]:
    """Seed an empty store in one transaction (or inside the caller's). Returns rows per table."""
    spec = SCALE_SPECS[scale]
    conn = store.connection()
    nested = conn.in_transaction
    if not nested:
        # Checked as a whole by the tests (PRAGMA foreign_key_check) rather than row by row.
        # (Inside a caller's transaction the pragma cannot change; the caller sets it.)
        conn.execute("PRAGMA foreign_keys = OFF")
    try:
        with store.write() as db:
            migrate.drop_indexes(store)  # bulk inserts go faster without them; rebuilt below
            # The triggers keeping models' derived columns (migration 0009) would run per row:
            # the columns are counted once below instead.
            triggers = migrate.drop_triggers(db)
            db.executemany("INSERT INTO base_models (name, position, ecosystem, kind, active) VALUES (?, ?, ?, ?, ?)",
                           [(b.name, i, b.ecosystem, b.kind, int(b.active)) for i, b in enumerate(facts.BASE_MODELS)])
            # A larger page cache while bulk inserting and building indexes (restored after).
            cache_size = db.execute("PRAGMA cache_size").fetchone()[0]
            db.execute("PRAGMA cache_size = -65536")
            sink = Sink(db)
            generator = Generator(sink, Random(seed), spec)
            generator.file_seed = seed  # model files' bytes are made from it (blockkit.emulator.services.files)
            landmarks = generator.run()
            meta.put(db, meta.SEED, seed)
            meta.put(db, meta.SCALE, scale)
            meta.put(db, meta.LANDMARKS, landmarks)
            migrate.apply_indexes(store)
            model_store.count_models(db)
            migrate.restore_triggers(db, triggers)
            db.execute("PRAGMA analysis_limit = 1000")  # planner statistics, sampled: fast on large data
            db.execute("ANALYZE")
            db.execute(f"PRAGMA cache_size = {int(cache_size)}")
    finally:
        if not nested:
            conn.execute("PRAGMA foreign_keys = ON")
    return dict(sink.counts)


def generate_users(store: Store, seed: int, scale: str) -> None:
    """Only the users (with their subscriptions) that ``generate(store, seed, scale)`` makes: the
    generator draws them first, from the same ``Random(seed)``, so the rows are the same, without
    the seconds a large catalogue takes (``blockkit emulator users`` without ``--data``)."""
    with store.write() as db:
        sink = Sink(db)
        Generator(sink, Random(seed), SCALE_SPECS[scale]).make_users()
        sink.flush_all()
