"""Base-model families as the platform groups them: each base model's ecosystem key.

The platform's pickers narrow by ``baseModelGroup`` through ``getBaseModelGroup`` (a base model's
name, or an ecosystem key, gives the key) and ``getBaseModelsByGroup`` (a key gives the base models
whose own ecosystem it is, child ecosystems left out). The table is the ecosystem of each of the
platform's base-model records: civitai/civitai ``packages/civitai-shared/src/basemodel.constants.ts``
at ebed661 (``baseModelRecords``, ``ecosystems``); facts only.
"""

from __future__ import annotations

ECOSYSTEM_KEYS: frozenset[str] = frozenset({
    'Ace', 'Anima', 'AuraFlow', 'Boogu', 'Chroma', 'CogVideoX',
    'Ernie', 'Flux1', 'Flux1Kontext', 'Flux2', 'Flux2Klein_4B', 'Flux2Klein_4B_base',
    'Flux2Klein_9B', 'Flux2Klein_9B_base', 'Flux3Video', 'FluxKrea', 'Grok', 'Haiper',
    'HappyHorse', 'HiDream', 'HiDream-O1', 'Hunyuan3D', 'HyDit1', 'HyV1',
    'Ideogram', 'Illustrious', 'Imagen4', 'Kling', 'Kolors', 'Krea2',
    'LTXV', 'LTXV2', 'LTXV23', 'Lens', 'Lightricks', 'Lumina',
    'MAI', 'MageFlow', 'MiniMaxH3', 'Mochi', 'NanoBanana', 'NoobAI',
    'ODOR', 'OpenAI', 'Other', 'PixArtA', 'PixArtE', 'PlaygroundV2',
    'PolyGen', 'Pony', 'PonyV7', 'Qwen', 'Qwen2', 'Qwen3',
    'Reve', 'SCascade', 'SD1', 'SD2', 'SD3', 'SD3_5M',
    'SDXL', 'SDXLDistilled', 'SVD', 'Seedance', 'Seedream', 'Sora2',
    'Tripo', 'Upscaler', 'Veo3', 'Vidu', 'WanImage27', 'WanVideo',
    'WanVideo-22-I2V-A14B', 'WanVideo-22-T2V-A14B', 'WanVideo-22-TI2V-5B', 'WanVideo-25-I2V', 'WanVideo-25-T2V', 'WanVideo14B_I2V_480p',
    'WanVideo14B_I2V_720p', 'WanVideo14B_T2V', 'WanVideo1_3B_T2V', 'WanVideo27', 'ZImageBase', 'ZImageTurbo',
})

# Base model name -> its ecosystem key.
ECOSYSTEM_OF: dict[str, str] = {
    'Anima': 'Anima',
    'AuraFlow': 'AuraFlow',
    'Chroma': 'Chroma',
    'CogVideoX': 'CogVideoX',
    'Ernie': 'Ernie',
    'Flux.1 S': 'Flux1',
    'Flux.1 D': 'Flux1',
    'Flux.1 Krea': 'FluxKrea',
    'Flux.1 Kontext': 'Flux1Kontext',
    'Flux.2 D': 'Flux2',
    'Flux.2 Klein 9B': 'Flux2Klein_9B',
    'Flux.2 Klein 9B-base': 'Flux2Klein_9B_base',
    'Flux.2 Klein 4B': 'Flux2Klein_4B',
    'Flux.2 Klein 4B-base': 'Flux2Klein_4B_base',
    'Flux 3 Video': 'Flux3Video',
    'Grok': 'Grok',
    'HappyHorse': 'HappyHorse',
    'HiDream': 'HiDream',
    'HiDream-O1': 'HiDream-O1',
    'Hunyuan 1': 'HyDit1',
    'Hunyuan Video': 'HyV1',
    'Ideogram 4.0': 'Ideogram',
    'Boogu': 'Boogu',
    'Illustrious': 'Illustrious',
    'Imagen4': 'Imagen4',
    'Kolors': 'Kolors',
    'Krea 2': 'Krea2',
    'LTXV': 'LTXV',
    'LTXV2': 'LTXV2',
    'LTXV 2.3': 'LTXV23',
    'Lens': 'Lens',
    'Lumina': 'Lumina',
    'MageFlow': 'MageFlow',
    'MAI': 'MAI',
    'Mochi': 'Mochi',
    'Nano Banana': 'NanoBanana',
    'NoobAI': 'NoobAI',
    'ODOR': 'ODOR',
    'OpenAI': 'OpenAI',
    'Upscaler': 'Upscaler',
    'Other': 'Other',
    'PixArt a': 'PixArtA',
    'PixArt E': 'PixArtE',
    'Playground v2': 'PlaygroundV2',
    'Pony': 'Pony',
    'Pony V7': 'PonyV7',
    'Qwen': 'Qwen',
    'Qwen 2': 'Qwen2',
    'Qwen 3': 'Qwen3',
    'Stable Cascade': 'SCascade',
    'SD 1.4': 'SD1',
    'SD 1.5': 'SD1',
    'SD 1.5 LCM': 'SD1',
    'SD 1.5 Hyper': 'SD1',
    'SD 2.0': 'SD2',
    'SD 2.0 768': 'SD2',
    'SD 2.1': 'SD2',
    'SD 2.1 768': 'SD2',
    'SD 2.1 Unclip': 'SD2',
    'SD 3': 'SD3',
    'SD 3.5': 'SD3',
    'SD 3.5 Large': 'SD3',
    'SD 3.5 Large Turbo': 'SD3',
    'SD 3.5 Medium': 'SD3_5M',
    'SDXL 0.9': 'SDXL',
    'SDXL 1.0': 'SDXL',
    'SDXL 1.0 LCM': 'SDXL',
    'SDXL Lightning': 'SDXL',
    'SDXL Hyper': 'SDXL',
    'SDXL Turbo': 'SDXL',
    'SDXL Distilled': 'SDXLDistilled',
    'Reve': 'Reve',
    'Seedream': 'Seedream',
    'SVD': 'SVD',
    'SVD XT': 'SVD',
    'Sora 2': 'Sora2',
    'Veo 3': 'Veo3',
    'Wan Video': 'WanVideo',
    'Wan Video 1.3B t2v': 'WanVideo1_3B_T2V',
    'Wan Video 14B t2v': 'WanVideo14B_T2V',
    'Wan Video 14B i2v 480p': 'WanVideo14B_I2V_480p',
    'Wan Video 14B i2v 720p': 'WanVideo14B_I2V_720p',
    'Wan Video 2.2 TI2V-5B': 'WanVideo-22-TI2V-5B',
    'Wan Video 2.2 I2V-A14B': 'WanVideo-22-I2V-A14B',
    'Wan Video 2.2 T2V-A14B': 'WanVideo-22-T2V-A14B',
    'Wan Video 2.5 T2V': 'WanVideo-25-T2V',
    'Wan Video 2.5 I2V': 'WanVideo-25-I2V',
    'Wan Image 2.7': 'WanImage27',
    'Wan Video 2.7': 'WanVideo27',
    'ZImageTurbo': 'ZImageTurbo',
    'ZImageBase': 'ZImageBase',
    'Vidu Q1': 'Vidu',
    'MiniMax H3': 'MiniMaxH3',
    'Kling': 'Kling',
    'Seedance': 'Seedance',
    'ACE Audio': 'Ace',
    'PolyGen': 'PolyGen',
    'Tripo': 'Tripo',
    'Hunyuan3D': 'Hunyuan3D',
}


def base_model_group(value: str) -> str:
    """The platform's getBaseModelGroup: a base model's ecosystem key, an ecosystem key itself, else "Other"."""
    if value in ECOSYSTEM_OF:
        return ECOSYSTEM_OF[value]
    return value if value in ECOSYSTEM_KEYS else "Other"


def base_models_of_group(group: str) -> list[str]:
    """The platform's getBaseModelsByGroup: the base models of that ecosystem (not its children); [] if unknown."""
    if group not in ECOSYSTEM_KEYS:
        return []
    return [name for name, key in ECOSYSTEM_OF.items() if key == group]
