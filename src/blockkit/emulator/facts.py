"""Platform facts the emulator serves and seeds from, one table each.

The spec (``spec/catalogue-and-oauth.md``) fixes the enum shapes and names the
states; the lists of values grow on the platform over time, so each list lives
here once and a platform change is a one-line change. The store's CHECK
constraints cover only the closed sets the spec names (tiers, statuses, modes,
hash kinds, periods...).
"""

from __future__ import annotations

from typing import NamedTuple

# --- Enums served by GET /enums -------------------------------------------------------

MODEL_TYPES: tuple[str, ...] = (
    "Checkpoint", "TextualInversion", "Hypernetwork", "AestheticGradient", "LORA", "LoCon", "DoRA",
    "Controlnet", "Upscaler", "MotionModule", "VAE", "Poses", "Wildcards", "Workflows", "Detection", "Other",
)

MODEL_FILE_TYPES: tuple[str, ...] = (
    "Model", "Text Encoder", "Pruned Model", "Negative", "Training Data", "VAE", "Config", "Archive",
)

BASE_MODEL_TYPES: tuple[str, ...] = ("Standard", "Inpainting", "Refiner", "Pix2Pix")

# --- Model files: what the download route's query accepts (constants.ts at civitai ebed661) --------

# Every ModelFileType the platform knows (constants.modelFileTypes), a superset of MODEL_FILE_TYPES.
DOWNLOAD_FILE_TYPES: tuple[str, ...] = (
    "Model", "Text Encoder", "Vision Encoder", "Pruned Model", "Negative", "Training Data", "VAE", "Config",
    "Archive", "UNet", "Diffusion Model", "CLIPVision", "ControlNet", "Workflow", "Upscaler", "Enhancement LoRA",
    "Other",
)
MODEL_FILE_FORMATS: tuple[str, ...] = ("SafeTensor", "PickleTensor", "GGUF", "Diffusers", "Core ML", "ONNX", "Other")
MODEL_FILE_SIZES: tuple[str, ...] = ("full", "pruned")


class BaseModel(NamedTuple):
    name: str
    # The AIR ecosystem segment (urn:air:<ecosystem>:<type>:<source>:<id>@<version>).
    ecosystem: str
    # Supported by on-site generation today (the enums' ActiveBaseModel list).
    active: bool
    kind: str  # image | video


# Every catalogued base model, in the order /enums lists them. The seed copies this table
# into the store's base_models table, which model versions reference.
BASE_MODELS: tuple[BaseModel, ...] = (
    BaseModel("SD 1.4", "sd1", False, "image"),
    BaseModel("SD 1.5", "sd1", True, "image"),
    BaseModel("SD 1.5 LCM", "sd1", False, "image"),
    BaseModel("SD 1.5 Hyper", "sd1", False, "image"),
    BaseModel("SD 2.0", "sd2", False, "image"),
    BaseModel("SD 2.1", "sd2", False, "image"),
    BaseModel("SDXL 1.0", "sdxl", True, "image"),
    BaseModel("SDXL Lightning", "sdxl", False, "image"),
    BaseModel("SDXL Hyper", "sdxl", False, "image"),
    BaseModel("SDXL Turbo", "sdxl", False, "image"),
    BaseModel("Pony", "sdxl", True, "image"),
    BaseModel("Illustrious", "sdxl", True, "image"),
    BaseModel("NoobAI", "sdxl", True, "image"),
    BaseModel("SD 3", "sd3", False, "image"),
    BaseModel("SD 3.5", "sd3", True, "image"),
    BaseModel("SD 3.5 Large", "sd3", True, "image"),
    BaseModel("Flux.1 S", "flux1", True, "image"),
    BaseModel("Flux.1 D", "flux1", True, "image"),
    BaseModel("AuraFlow", "auraflow", False, "image"),
    BaseModel("Kolors", "kolors", False, "image"),
    BaseModel("PixArt a", "pixarta", False, "image"),
    BaseModel("PixArt E", "pixarte", False, "image"),
    BaseModel("Lumina", "lumina", False, "image"),
    BaseModel("Stable Cascade", "scascade", False, "image"),
    BaseModel("SVD", "svd", False, "video"),
    BaseModel("Hunyuan 1", "hydit1", False, "image"),
    BaseModel("Hunyuan Video", "hyv1", True, "video"),
    BaseModel("Wan Video", "wanvideo", True, "video"),
    BaseModel("LTXV", "ltxv", True, "video"),
    BaseModel("Mochi", "mochi", False, "video"),
    BaseModel("Other", "other", False, "image"),
)

# The AIR type segment of each ModelType.
AIR_TYPES: dict[str, str] = {
    "Checkpoint": "checkpoint", "TextualInversion": "embedding", "Hypernetwork": "hypernet",
    "AestheticGradient": "ag", "LORA": "lora", "LoCon": "lycoris", "DoRA": "dora", "Controlnet": "controlnet",
    "Upscaler": "upscaler", "MotionModule": "motion", "VAE": "vae", "Poses": "poses", "Wildcards": "wildcards",
    "Workflows": "workflows", "Detection": "detection", "Other": "other",
}
AIR_SOURCE = "civitai"

# --- Content maturity -----------------------------------------------------------------

# The NSFW level bitmask: one bit per rating; a browsing level is an OR of these.
NSFW_LEVELS: dict[str, int] = {"PG": 1, "PG13": 2, "R": 4, "X": 8, "XXX": 16, "Blocked": 32}
SFW_BROWSING_LEVEL = NSFW_LEVELS["PG"] | NSFW_LEVELS["PG13"]  # the restricted-region clamp
ALL_BROWSING_LEVELS = sum(v for k, v in NSFW_LEVELS.items() if k != "Blocked")
# The legacy string form an Image's nsfwLevel takes (and a user's avatarNsfw), by bit.
NSFW_LEVEL_NAMES: dict[int, str] = {0: "None", 1: "None", 2: "Soft", 4: "Mature", 8: "X", 16: "X", 32: "X"}

# --- Closed state sets the spec names ---------------------------------------------------

USER_TIERS: tuple[str, ...] = ("free", "founder", "bronze", "silver", "gold")
MEMBER_TIERS: tuple[str, ...] = ("founder", "bronze", "silver", "gold")
USER_STATUSES: tuple[str, ...] = ("active", "muted", "banned")
MODEL_MODES: tuple[str, ...] = ("Archived", "TakenDown")
METRIC_PERIODS: tuple[str, ...] = ("AllTime", "Year", "Month", "Week", "Day")
HASH_KINDS: tuple[str, ...] = ("AutoV1", "AutoV2", "AutoV3", "SHA256", "CRC32", "BLAKE3")
IMAGE_TYPES: tuple[str, ...] = ("image", "video", "audio")
POST_AVAILABILITIES: tuple[str, ...] = ("Public", "Unlisted", "EarlyAccess", "Private")
COLLECTION_TYPES: tuple[str, ...] = ("Model", "Image", "Article", "Post")
COLLECTION_READ: tuple[str, ...] = ("Public", "Private", "Unlisted")
COLLECTION_ITEM_STATUSES: tuple[str, ...] = ("ACCEPTED", "REVIEW", "REJECTED")
VAULT_ITEM_STATUSES: tuple[str, ...] = ("Pending", "Stored", "Failed")
TAG_KINDS: tuple[str, ...] = ("model", "article", "image", "post", "collection")

# The system user: owns platform content, never listed by /users.
SYSTEM_USER_ID = -1
SYSTEM_USERNAME = "civitai"

# Vault allowance per membership tier, in KB (the spec: "derived from active membership(s)").
VAULT_STORAGE_KB: dict[str, int] = {
    "founder": 10 * 1024 * 1024, "bronze": 10 * 1024 * 1024,
    "silver": 25 * 1024 * 1024, "gold": 50 * 1024 * 1024,
}
