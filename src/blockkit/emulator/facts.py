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

# ModelType, in the platform's order (civitai/civitai@ebed661
# packages/civitai-db-schema/src/enums.ts:136-160; /enums sends Object.values(ModelType)).
MODEL_TYPES: tuple[str, ...] = (
    "Checkpoint", "TextualInversion", "Hypernetwork", "AestheticGradient", "LORA", "LoCon", "DoRA",
    "Controlnet", "Upscaler", "MotionModule", "VAE", "TextEncoder", "UNet", "CLIPVision", "Poses", "Wildcards",
    "Workflows", "ComfyWorkflows", "Detection", "VisionLanguage", "CLIP", "LLM", "Other",
)

# constants.modelFileTypes (src/server/common/constants.ts:53-71 at ebed661).
MODEL_FILE_TYPES: tuple[str, ...] = (
    "Model", "Text Encoder", "Vision Encoder", "Pruned Model", "Negative", "Training Data", "VAE", "Config",
    "Archive", "UNet", "Diffusion Model", "CLIPVision", "ControlNet", "Workflow", "Upscaler", "Enhancement LoRA",
    "Other",
)

# constants.baseModelTypes (constants.ts at ebed661).
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
    # The AIR ecosystem segment (urn:air:<ecosystem>:<type>:<source>:<id>@<version>): the root
    # ecosystem's key, lower case (src/shared/utils/air.ts getAirEcosystem; Upscaler reads 'other').
    ecosystem: str
    # Listed in /enums ActiveBaseModel: the platform's activeBaseModels, every record not hidden.
    active: bool
    # 'video' for a video-only base model, else 'image' (the store's base_models.kind: which previews
    # the seed makes for it).
    kind: str
    # The record's media types as the platform lists them (image, video, audio).
    media: tuple[str, ...] = ("image",)


# Every catalogued base model, in the order /enums lists them: baseModelRecords of
# packages/civitai-shared/src/basemodel.constants.ts at ebed661 (99 records; /enums BaseModel
# is their names, ActiveBaseModel the names of those not hidden). The seed copies this table
# into the store's base_models table, which model versions reference.
BASE_MODELS: tuple[BaseModel, ...] = (
    BaseModel('Anima', 'anima', True, 'image', ('image',)),
    BaseModel('AuraFlow', 'auraflow', True, 'image', ('image',)),
    BaseModel('Chroma', 'chroma', True, 'image', ('image',)),
    BaseModel('CogVideoX', 'cogvideox', True, 'video', ('video',)),
    BaseModel('Ernie', 'ernie', True, 'image', ('image',)),
    BaseModel('Flux.1 S', 'flux1', True, 'image', ('image',)),
    BaseModel('Flux.1 D', 'flux1', True, 'image', ('image',)),
    BaseModel('Flux.1 Krea', 'fluxkrea', True, 'image', ('image',)),
    BaseModel('Flux.1 Kontext', 'flux1kontext', True, 'image', ('image',)),
    BaseModel('Flux.2 D', 'flux2', True, 'image', ('image',)),
    BaseModel('Flux.2 Klein 9B', 'flux2', True, 'image', ('image',)),
    BaseModel('Flux.2 Klein 9B-base', 'flux2', True, 'image', ('image',)),
    BaseModel('Flux.2 Klein 4B', 'flux2', True, 'image', ('image',)),
    BaseModel('Flux.2 Klein 4B-base', 'flux2', True, 'image', ('image',)),
    BaseModel('Flux 3 Video', 'flux3video', True, 'video', ('video',)),
    BaseModel('Grok', 'grok', True, 'image', ('image', 'video')),
    BaseModel('HappyHorse', 'happyhorse', True, 'video', ('video',)),
    BaseModel('HiDream', 'hidream', True, 'image', ('image',)),
    BaseModel('HiDream-O1', 'hidream-o1', True, 'image', ('image',)),
    BaseModel('Hunyuan 1', 'hydit1', True, 'image', ('image',)),
    BaseModel('Hunyuan Video', 'hyv1', True, 'video', ('video',)),
    BaseModel('Ideogram 4.0', 'ideogram', True, 'image', ('image',)),
    BaseModel('Boogu', 'boogu', True, 'image', ('image',)),
    BaseModel('Illustrious', 'sdxl', True, 'image', ('image',)),
    BaseModel('Imagen4', 'imagen4', False, 'image', ('image',)),
    BaseModel('Kolors', 'kolors', True, 'image', ('image',)),
    BaseModel('Krea 2', 'krea2', True, 'image', ('image',)),
    BaseModel('LTXV', 'ltxv', True, 'video', ('video',)),
    BaseModel('LTXV2', 'ltxv2', True, 'video', ('video',)),
    BaseModel('LTXV 2.3', 'ltxv23', True, 'video', ('video',)),
    BaseModel('Lens', 'lens', True, 'image', ('image',)),
    BaseModel('Lumina', 'lumina', True, 'image', ('image',)),
    BaseModel('MageFlow', 'mageflow', True, 'image', ('image',)),
    BaseModel('MAI', 'mai', True, 'image', ('image',)),
    BaseModel('Mochi', 'mochi', True, 'video', ('video',)),
    BaseModel('Nano Banana', 'nanobanana', False, 'image', ('image',)),
    BaseModel('NoobAI', 'sdxl', True, 'image', ('image',)),
    BaseModel('ODOR', 'odor', False, 'image', ('image',)),
    BaseModel('OpenAI', 'openai', False, 'image', ('image',)),
    BaseModel('Upscaler', 'other', True, 'image', ('image',)),
    BaseModel('Other', 'other', True, 'image', ('image',)),
    BaseModel('PixArt a', 'pixarta', True, 'image', ('image',)),
    BaseModel('PixArt E', 'pixarte', True, 'image', ('image',)),
    BaseModel('Playground v2', 'playgroundv2', False, 'image', ('image',)),
    BaseModel('Pony', 'sdxl', True, 'image', ('image',)),
    BaseModel('Pony V7', 'auraflow', True, 'image', ('image',)),
    BaseModel('Qwen', 'qwen', True, 'image', ('image',)),
    BaseModel('Qwen 2', 'qwen2', True, 'image', ('image',)),
    BaseModel('Qwen 3', 'qwen3', True, 'image', ('image',)),
    BaseModel('Stable Cascade', 'scascade', False, 'image', ('image',)),
    BaseModel('SD 1.4', 'sd1', True, 'image', ('image',)),
    BaseModel('SD 1.5', 'sd1', True, 'image', ('image',)),
    BaseModel('SD 1.5 LCM', 'sd1', True, 'image', ('image',)),
    BaseModel('SD 1.5 Hyper', 'sd1', True, 'image', ('image',)),
    BaseModel('SD 2.0', 'sd2', True, 'image', ('image',)),
    BaseModel('SD 2.0 768', 'sd2', False, 'image', ('image',)),
    BaseModel('SD 2.1', 'sd2', True, 'image', ('image',)),
    BaseModel('SD 2.1 768', 'sd2', False, 'image', ('image',)),
    BaseModel('SD 2.1 Unclip', 'sd2', False, 'image', ('image',)),
    BaseModel('SD 3', 'sd3', False, 'image', ('image',)),
    BaseModel('SD 3.5', 'sd3', False, 'image', ('image',)),
    BaseModel('SD 3.5 Large', 'sd3', False, 'image', ('image',)),
    BaseModel('SD 3.5 Large Turbo', 'sd3', False, 'image', ('image',)),
    BaseModel('SD 3.5 Medium', 'sd3_5m', False, 'image', ('image',)),
    BaseModel('SDXL 0.9', 'sdxl', False, 'image', ('image',)),
    BaseModel('SDXL 1.0', 'sdxl', True, 'image', ('image',)),
    BaseModel('SDXL 1.0 LCM', 'sdxl', False, 'image', ('image',)),
    BaseModel('SDXL Lightning', 'sdxl', True, 'image', ('image',)),
    BaseModel('SDXL Hyper', 'sdxl', True, 'image', ('image',)),
    BaseModel('SDXL Turbo', 'sdxl', False, 'image', ('image',)),
    BaseModel('SDXL Distilled', 'sdxldistilled', False, 'image', ('image',)),
    BaseModel('Reve', 'reve', True, 'image', ('image',)),
    BaseModel('Seedream', 'seedream', False, 'image', ('image',)),
    BaseModel('SVD', 'svd', False, 'image', ('image',)),
    BaseModel('SVD XT', 'svd', False, 'image', ('image',)),
    BaseModel('Sora 2', 'sora2', False, 'video', ('video',)),
    BaseModel('Veo 3', 'veo3', False, 'video', ('video',)),
    BaseModel('Wan Video', 'wanvideo', False, 'video', ('video',)),
    BaseModel('Wan Video 1.3B t2v', 'wanvideo1_3b_t2v', True, 'video', ('video',)),
    BaseModel('Wan Video 14B t2v', 'wanvideo14b_t2v', True, 'video', ('video',)),
    BaseModel('Wan Video 14B i2v 480p', 'wanvideo14b_i2v_480p', True, 'video', ('video',)),
    BaseModel('Wan Video 14B i2v 720p', 'wanvideo14b_i2v_720p', True, 'video', ('video',)),
    BaseModel('Wan Video 2.2 TI2V-5B', 'wanvideo-22-ti2v-5b', True, 'video', ('video',)),
    BaseModel('Wan Video 2.2 I2V-A14B', 'wanvideo-22-i2v-a14b', True, 'video', ('video',)),
    BaseModel('Wan Video 2.2 T2V-A14B', 'wanvideo-22-t2v-a14b', True, 'video', ('video',)),
    BaseModel('Wan Video 2.5 T2V', 'wanvideo-25-t2v', True, 'video', ('video',)),
    BaseModel('Wan Video 2.5 I2V', 'wanvideo-25-i2v', True, 'video', ('video',)),
    BaseModel('Wan Image 2.7', 'wanimage27', True, 'image', ('image',)),
    BaseModel('Wan Video 2.7', 'wanvideo27', True, 'video', ('video',)),
    BaseModel('ZImageTurbo', 'zimageturbo', True, 'image', ('image',)),
    BaseModel('ZImageBase', 'zimagebase', True, 'image', ('image',)),
    BaseModel('Vidu Q1', 'vidu', False, 'video', ('video',)),
    BaseModel('MiniMax H3', 'minimaxh3', True, 'video', ('video',)),
    BaseModel('Kling', 'kling', False, 'video', ('video',)),
    BaseModel('Seedance', 'seedance', False, 'video', ('video',)),
    BaseModel('ACE Audio', 'ace', True, 'image', ('audio',)),
    BaseModel('PolyGen', 'polygen', False, 'image', ('image',)),
    BaseModel('Tripo', 'tripo', False, 'image', ('image',)),
    BaseModel('Hunyuan3D', 'hunyuan3d', False, 'image', ('image',)),
)

# The AIR type segment of each ModelType (src/shared/utils/air.ts typeUrnMap at ebed661; the
# types it does not map read 'unknown' there, written here as the platform's own lower-case name).
AIR_TYPES: dict[str, str] = {
    "Checkpoint": "checkpoint", "TextualInversion": "embedding", "Hypernetwork": "hypernet",
    "AestheticGradient": "ag", "LORA": "lora", "LoCon": "lycoris", "DoRA": "dora", "Controlnet": "controlnet",
    "Upscaler": "upscaler", "MotionModule": "motion", "VAE": "vae", "TextEncoder": "text_encoders",
    "UNet": "unet", "CLIPVision": "clipvision", "CLIP": "clip", "VisionLanguage": "visionlanguage",
    "Poses": "poses", "Wildcards": "wildcards", "Workflows": "workflows", "ComfyWorkflows": "comfyworkflows",
    "Detection": "detection", "LLM": "llm", "Other": "other",
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
