"""Word tables the seed draws realistic names from (our own lists)."""

from __future__ import annotations

USERNAME_HEADS = (
    "pixel", "moon", "echo", "nova", "quiet", "amber", "kiri", "sable", "tofu", "mori", "lumen", "vanta",
    "juniper", "cobalt", "rune", "saffron", "marble", "oak", "haze", "piper", "koi", "ember", "frost", "wren",
    "sora", "nimbus", "maple", "onyx", "velvet", "iris", "quill", "tamsin", "yuki", "basil", "cedar", "delta",
)
USERNAME_TAILS = (
    "fox", "smith", "works", "lab", "studio", "dreams", "crafts", "arts", "ink", "forge", "byte", "loom",
    "garden", "atelier", "pilot", "weaver", "hollow", "drift", "bloom", "shade",
)

ADJECTIVES = (
    "Dreamy", "Neon", "Velvet", "Crystal", "Ember", "Lunar", "Silent", "Vivid", "Gilded", "Misty", "Arcane",
    "Solar", "Feral", "Pastel", "Iron", "Hollow", "Radiant", "Faded", "Electric", "Verdant", "Gloomy", "Opal",
)
NOUNS = (
    "Garden", "Harbor", "Fox", "Lantern", "Orchid", "Circuit", "Tide", "Meadow", "Forge", "Comet", "Atlas",
    "Willow", "Drift", "Echo", "Prism", "Raven", "Canyon", "Reverie", "Mosaic", "Horizon", "Bloom", "Vessel",
)
STYLES = (
    "Watercolor", "Ink Wash", "Cyberpunk", "Art Nouveau", "Ukiyo-e", "Low Poly", "Claymation", "Film Noir",
    "Pixel Art", "Oil Painting", "Synthwave", "Gouache", "Charcoal Sketch", "Vaporwave", "Isometric",
    "Stained Glass", "Papercut", "Cel Shaded", "Risograph", "Baroque",
)
SUBJECTS = (
    "Knight", "Witch", "Astronaut", "Samurai", "Mermaid", "Robot", "Dragon", "Cat Girl", "Detective",
    "Pirate Captain", "Forest Spirit", "Mecha Pilot", "Vampire Noble", "Street Racer", "Alchemist",
)
CLOTHING = ("Kimono", "Trench Coat", "Plate Armor", "Sundress", "Hoodie", "Ball Gown", "Flight Suit", "Hanbok")
SCENES = (
    "a lighthouse at dusk", "a rainy neon alley", "a quiet mountain temple", "a floating island market",
    "an overgrown greenhouse", "a desert caravan at night", "a snowy train platform", "a coral reef city",
    "a candle-lit library", "a sunflower field at noon",
)
PROMPT_EXTRAS = (
    "volumetric light", "soft focus", "depth of field", "highly detailed", "cinematic composition",
    "golden hour", "film grain", "dramatic shadows", "wide angle", "bokeh", "muted palette", "rim light",
)
NEGATIVE = ("lowres", "blurry", "bad anatomy", "extra fingers", "watermark", "jpeg artifacts", "text")
SAMPLERS = ("Euler a", "Euler", "DPM++ 2M Karras", "DPM++ SDE Karras", "DDIM", "UniPC", "LCM")

MODEL_TAGS = (
    "anime", "photorealistic", "portrait", "landscape", "fantasy", "sci-fi", "architecture", "fashion",
    "horror", "cute", "concept art", "3d", "illustration", "retro", "painting", "food", "cars", "woman",
    "man", "scenery", "monster", "armor", "weapon", "flowers",
)
MODEL_CATEGORY_TAGS = (
    "character", "style", "concept", "clothing", "poses", "background", "tool", "vehicle", "buildings",
    "objects", "animal", "action", "assets",
)
ARTICLE_TAGS = ("training", "tutorial", "comfyui", "workflow", "lora", "prompting", "model showcase")
ARTICLE_CATEGORY_TAGS = ("guide", "news", "story", "contest", "announcement")
IMAGE_TAGS = (
    "outdoors", "indoors", "night", "sky", "water", "smile", "looking at viewer", "city", "forest", "rain",
    "sunset", "close-up", "full body", "animals", "flower", "traffic", "robot", "castle", "snow", "ocean",
)
POST_TAGS = ("showcase", "wip", "experiment", "contest entry", "comparison", "tutorial result")
COLLECTION_TAGS = ("favorites", "reference", "inspiration", "to try", "best of")

ARTICLE_TITLES = (
    "How I train character LoRAs on 24 GB", "A beginner's guide to {style}", "Prompting for {style}: notes",
    "Merging checkpoints without losing detail", "My ComfyUI workflow for upscaling",
    "What changed in {style} this year", "Ten tips for cleaner hands", "Choosing a base model in 2025",
    "Behind the {noun}: a making-of", "Captioning datasets the lazy way",
)
COLLECTION_NAMES = (
    "{adj} picks", "Best {style} models", "Reference: {noun}", "Weekend experiments", "Contest shortlist",
    "{style} moodboard", "Posts I learned from", "Articles to reread",
)
SUBSCRIPTION_PRODUCTS = {
    "founder": "Founder Membership", "bronze": "Bronze Membership", "silver": "Silver Membership",
    "gold": "Gold Membership",
}
