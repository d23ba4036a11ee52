"""The answers that decide what ``blockkit new`` writes, and the rules between them.

Every answer can come from a flag, a prompt, the defaults, or the
``blockkit.toml`` of an earlier run. Whatever its source, it goes through the
``parse_*`` function here, so a flag and a prompt refuse the same things.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from blockkit.jsstr import is_blank, js_trim, utf16_len
from blockkit.platform import (
    AUTH_MODES,
    BUDGET_SCOPE,
    CATEGORIES,
    CONTENT_RATINGS,
    GOODS_PURCHASE_SCOPE,
    GOODS_READ_SCOPE,
    LIMITS,
    MODEL_SLOTS,
    OAUTH_USER_SCOPE,
    PAGE_SLOT,
    SCOPES,
    SENSITIVE_SCOPES,
    STORAGE_SCOPES,
)
from blockkit.scaffold.catalog import PAGE_SURFACE, TEMPLATES
from blockkit.scaffold.naming import NamingError, check_block_id
from blockkit.scaffold.package_managers import PACKAGE_MANAGERS

DEFAULT_AUTH = "block-token"
OAUTH = "oauth"
DEFAULT_CONTENT_RATING = "g"
SURFACES: tuple[str, ...] = (PAGE_SURFACE, *MODEL_SLOTS)

# Written for the goods catalogue unless the developer words it themselves.
GOODS_JUSTIFICATION = (
    "Sells the items in this block's goods catalogue. A purchase happens only when"
    " the viewer picks an item and confirms its price."
)


class AnswerError(ValueError):
    """An answer blockkit cannot use; the message says why, for people."""


@dataclass(frozen=True)
class Answers:
    name: str
    block_id: str
    template: str
    surface: str = PAGE_SURFACE
    content_rating: str = DEFAULT_CONTENT_RATING
    package_manager: str | None = None
    category: str | None = None
    tagline: str | None = None
    repository: str | None = None
    auth: str = DEFAULT_AUTH
    goods: bool = False
    scopes: tuple[str, ...] = ()
    justifications: Mapping[str, str] = field(default_factory=dict)
    buzz_budget: int | None = None
    boot_skeleton: bool = True

    @property
    def on_page(self) -> bool:
        return self.surface == PAGE_SURFACE

    @property
    def all_scopes(self) -> tuple[str, ...]:
        return all_scopes(self.scopes, goods=self.goods, auth=self.auth, template=self.template)


def all_scopes(chosen: tuple[str, ...], *, goods: bool, auth: str, template: str | None = None) -> tuple[str, ...]:
    """The scopes the manifest declares: the chosen ones plus what the code and goods need."""
    # Every template shows the viewer with GET_VIEWER, which the platform refuses without
    # user:read:self; the oauth token also needs it. A manifest declares what its code uses.
    wanted = set(chosen) | {OAUTH_USER_SCOPE}
    if template is not None and template in TEMPLATES:
        wanted |= set(TEMPLATES[template].scopes)
    if goods:
        # Selling needs purchase; reading entitlements back needs read (spec, goods rule 1).
        wanted |= {GOODS_PURCHASE_SCOPE, GOODS_READ_SCOPE}
    # The platform's own order, so the manifest reads the same whatever order they came in.
    return tuple(scope for scope in SCOPES if scope in wanted)


def sensitive(scopes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(scope for scope in scopes if scope in SENSITIVE_SCOPES)


def needs_budget(answers_scopes: tuple[str, ...], surface: str) -> bool:
    # PLATFORM.md §7: the budgeted scope on a page without a budget draws advice.
    return BUDGET_SCOPE in answers_scopes and surface == PAGE_SURFACE


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    value = value.strip()
    if value not in choices:
        guess = did_you_mean(value, choices)
        hint = f"did you mean {guess!r}? " if guess else ""
        raise AnswerError(f"unknown {what} {value!r}; {hint}choose one of: {', '.join(choices)}")
    return value


def did_you_mean(value: str, choices: "tuple[str, ...] | list[str]") -> str | None:
    """The choice ``value`` was most likely meant to be: the same letters and digits without case
    and punctuation ("PG-13" -> pg13), a plural or singular ("game" -> games), else the closest
    spelling (difflib). None when nothing is close."""
    import difflib

    def bare(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    wanted = bare(value)
    if not wanted:
        return None
    for choice in choices:
        if bare(choice) in (wanted, wanted + "s", wanted + "es") or bare(choice) + "s" == wanted:
            return choice
    close = difflib.get_close_matches(wanted, [bare(c) for c in choices], n=1, cutoff=0.6)
    if close:
        return next(c for c in choices if bare(c) == close[0])
    return None


def parse_name(value: str) -> str:
    if is_blank(value):
        raise AnswerError("the name must not be blank")
    return js_trim(value)


def parse_block_id(value: str) -> str:
    try:
        return check_block_id(value.strip())
    except NamingError as exc:
        raise AnswerError(str(exc)) from None


def parse_template(value: str) -> str:
    return _choice(value, tuple(TEMPLATES), "template")


def parse_surface(value: str) -> str:
    value = value.strip()
    # app.page is the page slot's id; accept it for the page surface.
    if value == PAGE_SLOT:
        return PAGE_SURFACE
    return _choice(value, SURFACES, "surface")


def parse_content_rating(value: str) -> str:
    return _choice(value.lower(), CONTENT_RATINGS, "content rating")


def parse_package_manager(value: str) -> str:
    return _choice(value, tuple(PACKAGE_MANAGERS), "package manager")


def parse_category(value: str) -> str | None:
    if not value.strip() or value.strip() == "none":
        return None
    return _choice(value.lower(), CATEGORIES, "category")


def parse_tagline(value: str) -> str | None:
    if is_blank(value):
        return None
    value = js_trim(value)
    if utf16_len(value) > LIMITS.tagline_max:
        raise AnswerError(
            f"the tagline is {utf16_len(value)} characters long (as JavaScript counts them);"
            f" the limit is {LIMITS.tagline_max}"
        )
    return value


def parse_repository(value: str) -> str | None:
    """A repository link in the form the platform stores, so lint has nothing to say about it."""
    from blockkit.urls import check_repository

    value = value.strip()
    if not value:
        return None
    verdict = check_repository(value)
    if verdict.stored is None:
        hint = f"; {verdict.hint}" if verdict.hint else ""
        raise AnswerError(f"the repository link {value!r} {verdict.problem}{hint}")
    return verdict.stored


def parse_auth(value: str) -> str:
    return _choice(value, AUTH_MODES, "auth mode")


def parse_scopes(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Scopes as flags (repeatable) or one comma- or space-separated answer."""
    pieces = [value] if isinstance(value, str) else list(value)
    scopes: list[str] = []
    for piece in pieces:
        scopes += [s for s in piece.replace(",", " ").split() if s and s != "none"]
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise AnswerError(f"unknown scope(s): {', '.join(unknown)}; known scopes: {', '.join(SCOPES)}")
    return tuple(dict.fromkeys(scopes))


def parse_justification(value: str) -> str:
    if is_blank(value):
        raise AnswerError("a sensitive scope needs a justification that is not blank")
    value = js_trim(value)
    if utf16_len(value) > LIMITS.scope_justification_max:
        raise AnswerError(
            f"the justification is {utf16_len(value)} characters long; the limit is {LIMITS.scope_justification_max}"
        )
    return value


def parse_justify_flags(values: tuple[str, ...]) -> dict[str, str]:
    """``--justify SCOPE=TEXT`` flags."""
    result: dict[str, str] = {}
    for item in values:
        scope, sep, text = item.partition("=")
        scope = scope.strip()
        if not sep:
            raise AnswerError(f"--justify wants SCOPE=TEXT, got {item!r}")
        if scope not in SCOPES:
            raise AnswerError(f"--justify names an unknown scope {scope!r}")
        result[scope] = parse_justification(text)
    return result


def parse_buzz_budget(value: str | int) -> int:
    try:
        budget = int(str(value).strip())
    except ValueError:
        raise AnswerError(f"the Buzz budget per generation must be a whole number, got {value!r}") from None
    if not 1 <= budget <= LIMITS.buzz_budget_clamp:
        # The platform clamps above the cap; asking for more only misleads.
        raise AnswerError(f"the Buzz budget per generation must be 1-{LIMITS.buzz_budget_clamp}, got {budget}")
    return budget


def parse_bool(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in ("y", "yes", "true", "1", "on"):
        return True
    if lowered in ("n", "no", "false", "0", "off"):
        return False
    raise AnswerError(f"answer yes or no, got {value!r}")


def check_combination(answers: Answers) -> None:
    """Rules between answers, which no single answer can check."""
    template = TEMPLATES[answers.template]
    if template.builds and answers.package_manager is None:
        raise AnswerError(f"the {answers.template} template needs a package manager")
    if not template.builds and answers.package_manager is not None:
        raise AnswerError(
            "the static template has no build step, so it takes no package manager;"
            " drop --package-manager or choose --template vite or react"
        )
    surfaces = TEMPLATES[answers.template].surfaces
    if surfaces is not None and answers.surface not in surfaces:
        raise AnswerError(f"the {answers.template} template is written for {' or '.join(surfaces)}:"
                          f" drop --surface, or choose another template")
    storage = sorted(set(answers.all_scopes) & STORAGE_SCOPES)
    if answers.auth == OAUTH and storage:
        raise AnswerError(
            f"auth 'oauth' cannot be combined with app storage scopes ({', '.join(storage)}):"
            " the platform refuses that manifest at submit"
        )
    missing = [s for s in sensitive(answers.all_scopes) if s not in answers.justifications]
    if missing:
        raise AnswerError(f"sensitive scope(s) without a justification: {', '.join(missing)}")
    stray = sorted(set(answers.justifications) - set(answers.all_scopes))
    if stray:
        raise AnswerError(f"justification(s) given for undeclared scope(s): {', '.join(stray)}")
    if answers.buzz_budget is not None and not needs_budget(answers.all_scopes, answers.surface):
        raise AnswerError(f"a Buzz budget only applies to a page that declares {BUDGET_SCOPE}")
