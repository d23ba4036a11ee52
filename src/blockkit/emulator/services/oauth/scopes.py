"""OAuth scope bits: the platform's bitmask, with what each bit lets an app do, in words.

The spec names UserRead 1, AIServicesRead 16384, AIServicesWrite 32768 and BuzzRead 65536,
and bounds a scope by ``Full``; the platform's public source gives the other bits and
``Full`` = 2**25 - 1 (bits 0-24). The consent page lists a request's bits with these
descriptions (our wording).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScopeBit:
    bit: int
    name: str
    words: str        # what the consent page says the app may do
    sensitive: bool   # money, private data or writes: the consent page marks them
    spends_buzz: bool = False  # what the app may do with it costs the user Buzz: the page offers a limit


SCOPE_BITS: tuple[ScopeBit, ...] = (
    # Unmarked: the provider adds UserRead to every grant (the basic read scope), so a warning on it
    # would stand on every consent page and tell the user nothing.
    ScopeBit(1 << 0, "UserRead", "See your username, profile picture, settings and email address", False),
    ScopeBit(1 << 1, "UserWrite", "Change your profile and settings", True),
    ScopeBit(1 << 2, "ModelsRead", "Browse and download models", False),
    ScopeBit(1 << 3, "ModelsWrite", "Upload models and edit yours", True),
    ScopeBit(1 << 4, "ModelsDelete", "Delete your models", True),
    ScopeBit(1 << 5, "MediaRead", "See images, videos and posts", False),
    ScopeBit(1 << 6, "MediaWrite", "Upload media and publish posts", True),
    ScopeBit(1 << 7, "MediaDelete", "Delete your media and posts", True),
    ScopeBit(1 << 8, "ArticlesRead", "Read articles", False),
    ScopeBit(1 << 9, "ArticlesWrite", "Write and edit your articles", True),
    ScopeBit(1 << 10, "ArticlesDelete", "Delete your articles", True),
    ScopeBit(1 << 11, "BountiesRead", "See bounties", False),
    ScopeBit(1 << 12, "BountiesWrite", "Create and manage bounties (spends Buzz)", True, spends_buzz=True),
    ScopeBit(1 << 13, "BountiesDelete", "Delete your bounties", True),
    ScopeBit(1 << 14, "AIServicesRead", "See your generation and training history", False),
    ScopeBit(1 << 15, "AIServicesWrite", "Generate, train and scan on your behalf (spends Buzz)", True, spends_buzz=True),
    ScopeBit(1 << 16, "BuzzRead", "See your Buzz balance and transactions", True),
    ScopeBit(1 << 17, "CollectionsRead", "See your collections", False),
    ScopeBit(1 << 18, "CollectionsWrite", "Change your collections", True),
    ScopeBit(1 << 19, "SocialWrite", "Follow, react, comment and review as you", True),
    ScopeBit(1 << 20, "SocialTip", "Tip other users with your Buzz", True, spends_buzz=True),
    ScopeBit(1 << 21, "NotificationsRead", "Read your notifications", True),
    ScopeBit(1 << 22, "NotificationsWrite", "Change your notification preferences", True),
    ScopeBit(1 << 23, "VaultRead", "See your private model vault", True),
    ScopeBit(1 << 24, "VaultWrite", "Change your model vault", True),
)

BY_NAME = {s.name: s.bit for s in SCOPE_BITS}
USER_READ = BY_NAME["UserRead"]
AI_SERVICES_WRITE = BY_NAME["AIServicesWrite"]
FULL = (1 << 25) - 1  # every bit above; the largest valid scope


def parse_scope(text: str | None) -> int | None:
    """A scope parameter as the spec allows it: a decimal integer 0..Full (ASCII digits only), else None."""
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 10:
        return None
    value = int(text)
    return value if value <= FULL else None


def bits_of(scope: int) -> list[ScopeBit]:
    """The named bits a scope carries, in bit order."""
    return [s for s in SCOPE_BITS if scope & s.bit]


def spends_buzz(scope: int) -> bool:
    """Whether a scope lets the app spend the user's Buzz (generate, bounties, tips)."""
    return any(s.spends_buzz for s in bits_of(scope))


def within(scope: int, ceiling: int) -> bool:
    """Whether ``scope`` asks for nothing outside ``ceiling``."""
    return scope & ~ceiling == 0
