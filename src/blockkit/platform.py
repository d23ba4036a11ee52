"""Platform facts, as data.

Everything the platform decides that a rule needs to know lives here, one table
per fact, so that a change on the platform is a one-line change here. Sources:
the manifest spec (the authority) and PLATFORM.md where the spec is silent.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from blockkit.record import FrozenRecord

SCHEMA_ID = "https://civitai.com/schemas/app-block/v1.json"
MANIFEST_FILENAME = "block.manifest.json"


class ScopeInfo(FrozenRecord):
    """What the platform knows of one scope (read-only)."""

    __slots__ = ("sensitive", "oauth_bit")
    sensitive: bool
    oauth_bit: int | None  # None: no OAuth bit, never limited by an OAuth client

    def __init__(self, sensitive: bool = False, oauth_bit: int | None = None) -> None:
        self._set(sensitive=sensitive, oauth_bit=oauth_bit)


SCOPES: Mapping[str, ScopeInfo] = MappingProxyType(
    {
        "models:read:self": ScopeInfo(oauth_bit=4),
        "media:read:owned": ScopeInfo(),
        "user:read:self": ScopeInfo(oauth_bit=1),
        "ai:write:budgeted": ScopeInfo(sensitive=True, oauth_bit=32768),
        "buzz:read:self": ScopeInfo(sensitive=True, oauth_bit=65536),
        "block:settings:read": ScopeInfo(),
        "block:settings:write": ScopeInfo(),
        "social:tip:self": ScopeInfo(sensitive=True, oauth_bit=1048576),
        "apps:storage:read": ScopeInfo(),
        "apps:storage:write": ScopeInfo(),
        "apps:storage:shared:read": ScopeInfo(),
        "apps:storage:shared:write": ScopeInfo(sensitive=True),
        "collections:read:self": ScopeInfo(),
        "collections:write:self": ScopeInfo(),
        "collections:read:private": ScopeInfo(sensitive=True),
        "goods:purchase:self": ScopeInfo(sensitive=True),
        "goods:read:self": ScopeInfo(),
        "posts:write:self": ScopeInfo(sensitive=True),
    }
)
SENSITIVE_SCOPES: frozenset[str] = frozenset(s for s, info in SCOPES.items() if info.sensitive)
STORAGE_SCOPE_PREFIX = "apps:storage:"
STORAGE_SCOPES: frozenset[str] = frozenset(s for s in SCOPES if s.startswith(STORAGE_SCOPE_PREFIX))
# The server's shape for any scope id, known or not: lowercase word:word[:word[:word]].
SCOPE_SHAPE = r"^[a-z0-9_]+(:[a-z0-9_]+){1,3}$"

GOODS_PURCHASE_SCOPE = "goods:purchase:self"
GOODS_READ_SCOPE = "goods:read:self"
OAUTH_USER_SCOPE = "user:read:self"
BUDGET_SCOPE = "ai:write:budgeted"

CONTENT_RATINGS: tuple[str, ...] = ("g", "pg", "pg13", "r", "x")
CATEGORIES: tuple[str, ...] = (
    "generation", "games", "utility", "discovery", "moderation", "analytics", "other",
)
RENDER_MODES: tuple[str, ...] = ("iframe", "inline", "hybrid")
AUTH_MODES: tuple[str, ...] = ("block-token", "oauth")
GOOD_KINDS: tuple[str, ...] = ("good", "app_unlock")
APP_UNLOCK = "app_unlock"

TRUST_TIERS: tuple[str, ...] = ("unverified", "verified", "internal")
DEFAULT_TIER = "unverified"

# Tokens each trust tier may put in iframe.sandbox.
_UNVERIFIED_TOKENS = ("allow-scripts", "allow-forms")
_VERIFIED_TOKENS = _UNVERIFIED_TOKENS + (
    "allow-popups", "allow-modals", "allow-pointer-lock", "allow-downloads",
)
_INTERNAL_TOKENS = _VERIFIED_TOKENS + ("allow-same-origin",)
SANDBOX_TOKENS_BY_TIER: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "unverified": frozenset(_UNVERIFIED_TOKENS),
        "verified": frozenset(_VERIFIED_TOKENS),
        "internal": frozenset(_INTERNAL_TOKENS),
    }
)
# A pair that defeats the sandbox: refused at every tier (the spec says "never").
FORBIDDEN_SANDBOX_PAIR: tuple[str, str] = ("allow-same-origin", "allow-scripts")

# renderMode -> tiers that may use it.
RENDER_MODE_TIERS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "iframe": frozenset(TRUST_TIERS),
        "inline": frozenset({"verified", "internal"}),
        "hybrid": frozenset({"verified", "internal"}),
    }
)

PAGE_SLOT = "app.page"
MODEL_SLOTS: tuple[str, ...] = ("model.sidebar_top", "model.below_images", "model.actions_extra")
# Model slots are shown for moderators' apps only at launch.
MODERATOR_ONLY_SLOTS: frozenset[str] = frozenset(MODEL_SLOTS)

# iframe members the server always has, because it always creates the object.
IFRAME_REQUIRED_MEMBERS: tuple[str, ...] = ("minHeight", "maxHeight", "resizable", "sandbox")
# Defaults that `blockkit fix --unsafe` and `blockkit new` write for missing members.
IFRAME_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {"minHeight": 600, "maxHeight": None, "resizable": False, "sandbox": "allow-scripts allow-forms"}
)
SERVER_OWNED_KEYS: tuple[str, ...] = ("/trustTier", "/iframe/src")
# Top-level fields whose schema rules the platform already applies at submit (upload):
# blockId, version and name (PLATFORM.md §1), and category ("unknown value rejected at
# submit", spec). Everything else in the schema is checked at approval.
SUBMIT_CHECKED_FIELDS: tuple[str, ...] = ("blockId", "version", "name", "category")

# Repository links: the hosts the server accepts ({base_url} is civitai.com).
REPOSITORY_HOSTS: tuple[str, ...] = ("github.com", "gitlab.com", "civitai.com")
DEFAULT_APP_DOMAIN = "civit.ai"

# buildCommand's package manager -> the lockfile the platform builds from.
LOCKFILES: Mapping[str, str] = MappingProxyType(
    {"npm": "package-lock.json", "npx": "package-lock.json", "vite": "package-lock.json",
     "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock"}
)
# The npm lockfile must be a JSON object whose lockfileVersion is a number of at least
# this (npm ci refuses anything else); pnpm and yarn lockfiles must hold more than blank
# lines and comments.
NPM_LOCKFILE_MIN_VERSION = 1


class Limits:
    """The platform's limits, as read-only class attributes (``LIMITS.tagline_max``).

    Not a frozen dataclass: generating the methods of one with this many fields took
    about 10 ms at every start of the CLI, and nothing builds a Limits with other values.
    """

    __slots__ = ()  # no instance attributes: ``LIMITS.tagline_max = 1`` raises AttributeError

    block_id_min: int = 3
    block_id_max: int = 40
    tagline_max: int = 140
    repository_max: int = 200
    build_command_max: int = 128
    output_dir_max: int = 256
    public_settings_keys_max: int = 32
    public_settings_key_len_max: int = 64
    targets_max: int = 16
    goods_max: int = 32
    good_id_max: int = 64
    good_title_max: int = 80
    good_description_max: int = 500
    good_justification_max: int = 500
    good_price_min: int = 2
    good_price_max: int = 50000
    app_unlock_price_max: int = 5000
    app_unlocks_max: int = 1
    good_payload_bytes_max: int = 2048
    scope_justification_max: int = 500
    iframe_height_min: int = 40
    iframe_height_max: int = 4000
    page_title_max: int = 128
    page_path_max: int = 256
    page_icon_max: int = 128
    buzz_budget_clamp: int = 1000
    buzz_budget_default: int = 10
    file_bytes_max: int = 1024 * 1024
    # Deep enough for any real manifest, shallow enough for every recursive consumer.
    nesting_max: int = 256


LIMITS = Limits()


# --- lint: facts the advisory rules (BK3xx) read ----------------------------------

# Keys real manifests carry that the platform ignores (PLATFORM.md §7), with the
# nearest key the manifest does define (None: there is none, remove it).
STALE_TOP_LEVEL_KEYS: Mapping[str, str | None] = MappingProxyType(
    {"appId": None, "settings": "publicSettingsKeys", "description": "tagline"}
)
STALE_TARGET_KEYS: Mapping[str, str | None] = MappingProxyType({"priority": None})

# The message a block must send to answer BLOCK_INIT (PLATFORM.md §6).
READY_MESSAGE = "BLOCK_READY"
# Packages whose runtime sends READY_MESSAGE for the block (exact names). The React
# bindings' transport sends it; the newer SDK's initialize() acknowledges BLOCK_INIT
# with it (the platform CLI's page-elements template relies on that). The older
# @civitai/app-sdk does not send it (its runtime files never name the message), nor do
# the theme and component packages, so depending on them proves nothing.
READY_SENDING_PACKAGES: tuple[str, ...] = ("@civitai/blocks-react", "@civitai/sdk")
# package.json sections that put a package into the block's build.
PACKAGE_DEPENDENCY_SECTIONS: tuple[str, ...] = ("dependencies", "devDependencies", "peerDependencies")


class StorageStore(FrozenRecord):
    """One app store: how block code reaches it, and the scopes that open it (read-only)."""

    __slots__ = ("name", "scopes", "code_patterns")
    name: str
    scopes: tuple[str, ...]  # declaring any one of these opens the store
    # Regexes over comment-stripped source: a call of the SDK hook, the
    # postMessage types and the REST route family of the store. Lint runs them on
    # untrusted files, so every repetition in them is bounded (see _hook_call), and
    # each starts with its literal text (see _word).
    code_patterns: tuple[str, ...]

    def __init__(self, name: str, scopes: tuple[str, ...], code_patterns: tuple[str, ...]) -> None:
        self._set(name=name, scopes=scopes, code_patterns=code_patterns)


def _word(text: str) -> str:
    r"""``text`` where no word character comes before it: ``\btext``, with the check written
    after the text, so that the regex engine can search for the text itself (a hundred
    times faster over a large bundle than trying ``\b`` at every position)."""
    return rf"{text}(?<!\w{text})"


def _hook_call(hook: str) -> str:
    """A call of ``hook``, with type arguments if any (``useAppStorage<Record<string, T>>(``).

    Type arguments of at most 256 characters and runs of at most 64 whitespace characters
    are recognised: an unbounded ``<[^>()]*`` scanned to the end of the file from every
    "useAppStorage<", quadratic time (280 KB took minutes). The "(" is the first one after
    the "<", so a greedy scan finds the same call as a lazy one, several times faster.
    """
    return rf"{_word(hook)}\s{{0,64}}(?:<[^()]{{0,256}}>\s{{0,64}})?\("


# The declaration that marks the bridge module `blockkit new` writes (templates/_shared/
# bridge.js). It offers every storage message without using any, like a dependency:
# the storage scan skips its message names and counts calls of its helpers instead.
BLOCKKIT_BRIDGE_MARKER = "BRIDGE_ID = 'blockkit-bridge/1'"

STORAGE_STORES: tuple[StorageStore, ...] = (
    StorageStore(
        name="per-viewer app storage",
        scopes=("apps:storage:read", "apps:storage:write"),
        code_patterns=(
            _hook_call("useAppStorage"),  # a call, not just an import
            r"""["'`]APP_STORAGE_(?:GET|SET|DELETE|LIST|QUOTA)["'`]""",
            _word("blocks/app-storage/"),
            # Calls of the helpers of the bridge `blockkit new` writes: bridge.storageGet(...),
            # storageSet, storageDelete (one pattern: each costs a pass over every file).
            rf"{_word('storage')}(?:[GS]et|Delete)\s{{0,64}}(?:<[^()]{{0,256}}>\s{{0,64}})?\(",
        ),
    ),
    StorageStore(
        name="shared app storage",
        scopes=("apps:storage:shared:read", "apps:storage:shared:write"),
        code_patterns=(
            _hook_call("useSharedStorage"),
            r"""["'`]SHARED_(?:LIST|GET|GET_COUNTS?|APPEND|UPDATE|VOTE|UNVOTE|WITHDRAW|REPORT)["'`]""",
            _word("blocks/shared-storage/"),
        ),
    ),
)


# --- server: facts the server rules (BK2xx) read beyond the tables above ----------

OAUTH_AUTH = "oauth"  # the `auth` value that refuses apps:storage:* scopes
# Host names that never count as public for assetBundleUrl (PLATFORM.md §5, and the
# platform's lexical SSRF guard, civitai/civitai@ebed661 src/server/utils/ssrf-hostname.ts,
# PRIVATE_HOSTNAME_PATTERNS): exactly these names, and names with these suffixes. The
# platform denies the exact name `localhost` only: `a.localhost` passes its check (lint's
# BK322 warns about it).
PRIVATE_HOST_NAMES: frozenset[str] = frozenset({"localhost", "metadata.google.internal"})
PRIVATE_HOST_SUFFIXES: tuple[str, ...] = (".local", ".internal")
# Text prefixes the platform denies at the start of the host (the WHATWG `hostname`), as
# text, whether the host is an address or a DNS name: `10.example.com` is refused like
# `10.0.0.1`. 172.16-31 is written out as its sixteen prefixes.
PRIVATE_HOST_PREFIXES: tuple[str, ...] = (
    "127.", "10.", *(f"172.{n}." for n in range(16, 32)), "192.168.", "169.254.", "0.",
)
# The guard's IPv6 patterns (`::1` exactly, `fc..:`/`fd..:`, `fe80:`) and `%` can never
# match a DNS name (a host name holds no ":" or "%"), and every IPv6 host is refused
# as an IP literal anyway; they are listed for completeness of the record.
PRIVATE_HOST_IPV6_PATTERNS: tuple[str, ...] = (r"^::1$", r"^f[cd][0-9a-f]{2}:", r"^fe80:", r"%")
# Suffix that browsers resolve to loopback (RFC 6761) but the platform accepts.
LOOPBACK_SUFFIX = ".localhost"

# settings.* fields with a `pattern` (civitai/civitai@ebed661
# src/server/services/blocks/settings-pattern-guard.ts and
# src/server/schema/blocks/manifest-settings.meta.schema.ts, MAX_PATTERNED_INPUT_LEN).
SETTINGS_PATTERN_MAX_LENGTH = 1000


# --- submission: the bundle the platform's submitVersion accepts (BK5xx) ----------


class BundleLimits:
    """The caps of a submitted bundle, as read-only class attributes (``BUNDLE_LIMITS.files_max``).

    civitai/civitai@ebed661 src/server/schema/blocks/publish-request.schema.ts
    (MAX_BUNDLE_SIZE_BYTES, MAX_FILES_IN_BUNDLE, MAX_FILE_SIZE_BYTES,
    MAX_TOTAL_DECOMPRESSED_BYTES, and the bundleBase64 string cap) and
    src/pages/api/v1/blocks/submit-version.ts (bodyParser sizeLimit '72mb'). The proxy's
    limit in front of the route is not in that source: it is the civitai CLI's (PR #585,
    after cli#423, where an 8.20 MB bundle was refused as "400: Invalid JSON").
    """

    __slots__ = ()

    bundle_bytes_max: int = 50 * 1024 * 1024  # the zip as uploaded (decoded from base64)
    files_max: int = 2000  # entries that are not directories
    file_bytes_max: int = 10 * 1024 * 1024  # one entry, decompressed
    decompressed_bytes_max: int = 200 * 1024 * 1024  # every entry together: the zip-bomb ceiling
    # The zod cap on the bundleBase64 string: ceil(bundle_bytes_max * 4 / 3) + 16.
    base64_chars_max: int = -(-bundle_bytes_max * 4 // 3) + 16
    # Next.js bodyParser sizeLimit "72mb" (the `bytes` package: 1 mb = 1024 * 1024 bytes).
    route_body_bytes_max: int = 72 * 1024 * 1024
    # The proxy in front of the platform (civitai CLI PR #585: 10485760 bytes).
    proxy_body_bytes_max: int = 10485760
    # Directory entries allowed in the central directory beside files_max files before the
    # archive is refused unread (docs/platform-shapes.md, "Bundles"): each entry costs memory
    # to parse, so a bundle declaring millions of them is refused from its end record alone.
    entries_max: int = 4 * files_max


BUNDLE_LIMITS = BundleLimits()
# The JSON body the submit route receives: {"bundleBase64": "<base64 of the zip>"}.
SUBMIT_BODY_KEY = "bundleBase64"

# What the platform's CLI leaves out of the source zip it builds (civitai/cli
# internal/pkgzip/pkgzip.go): directory names at any depth, matched exactly, reported
# once as "name/" with no rule tag.
PACKAGE_EXCLUDED_DIRS: frozenset[str] = frozenset({
    ".git", ".hg", ".svn",  # VCS metadata
    "node_modules", ".venv", "venv", ".pnpm-store",  # dependency installs
    "dist", "build", "out", ".next",  # build output
    ".vite", ".cache", "coverage", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".turbo",  # caches
})
# VCS names dropped as regular files too (a linked worktree's or a submodule's `.git` file).
PACKAGE_VCS_NAMES: frozenset[str] = frozenset({".git", ".hg", ".svn"})
# Dotenv files kept, by exact name, at the project root only (vite build reads
# .env.production; the other two are templates a reviewer reads).
PACKAGE_KEPT_ENV_FILES: frozenset[str] = frozenset({".env.example", ".env.sample", ".env.production"})
# The tags the CLI's "Skipped N path(s)" line gives the pattern rules.
PACKAGE_RULE_ARCHIVE = "*.zip"
PACKAGE_RULE_DOTENV_PREFIX = ".env*"
PACKAGE_RULE_DOTENV_SUFFIX = "*.env"
PACKAGE_RULE_DOTENV_DIR = ".env or .env.*"
PACKAGE_RULE_NON_REGULAR = "not a regular file"

# Publisher screenshots in a bundle (civitai/civitai@ebed661 publish-request.schema.ts
# MAX_SCREENSHOTS, MAX_SCREENSHOT_SIZE_BYTES, SCREENSHOT_EXTENSIONS, SCREENSHOT_DIR;
# publish-request.service.ts SCREENSHOT_NAME_REGEX and detectImageType).
SCREENSHOT_DIR = "screenshots/"
SCREENSHOTS_MAX = 8
SCREENSHOT_BYTES_MAX = 2 * 1024 * 1024
SCREENSHOT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
SCREENSHOT_EXTENSIONS: tuple[str, ...] = ("png", "webp", "jpg", "jpeg")
