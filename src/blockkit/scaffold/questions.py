"""Turn flags, saved answers, defaults and prompts into ``Answers``.

One table of questions serves every way of answering, so a prompt and a flag
ask the same thing, parse it the same way, and a non-interactive run can list
exactly what it lacks.

- A question a flag (or an earlier run's blockkit.toml) answered is not asked.
- With ``use_defaults`` every question with a default takes it.
- With a prompter (a terminal), the rest are asked.
- Without one, an optional question takes its default silently, and a required
  one is missing. Missing answers are reported all together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from blockkit.platform import (
    AUTH_MODES,
    BUDGET_SCOPE,
    CATEGORIES,
    CONTENT_RATINGS,
    GOODS_PURCHASE_SCOPE,
    LIMITS,
    SCOPES,
    STORAGE_SCOPES,
)
from blockkit.scaffold import options as o
from blockkit.scaffold.catalog import DEFAULT_TEMPLATE, PAGE_SURFACE, TEMPLATES
from blockkit.scaffold.naming import NamingError, derive_block_id
from blockkit.scaffold.package_managers import DEFAULT_PACKAGE_MANAGER, PACKAGE_MANAGERS

Known = Mapping[str, Any]
# Seeded into the answers so far: the name the target directory suggests.
SUGGESTED_NAME = "suggested_name"


@dataclass(frozen=True)
class Question:
    key: str
    flag: str
    text: str
    parse: Callable[[Any, Known], Any]
    # From the answers so far; a question whose default gives None has none.
    default: Callable[[Known], Any] = lambda known: None
    # Required: without a terminal or --defaults, it must come from a flag.
    required: bool = False
    choices: tuple[str, ...] = ()
    yes_no: bool = False
    metavar: str = "TEXT"
    # What a prompt shows; ``text`` explains the question in the missing-answers list.
    label: str = ""


class Prompter(Protocol):
    def ask(self, question: Question, default: Any, known: Known) -> Any:
        """Ask until ``question.parse`` accepts the answer; return the parsed value."""

    def note(self, text: str) -> None: ...


@dataclass
class MissingAnswers(Exception):
    questions: list[Question] = field(default_factory=list)

    def __str__(self) -> str:
        width = max(len(_usage(q)) for q in self.questions)
        lines = [f"  {_usage(q).ljust(width)}  {q.text}" for q in self.questions]
        return "\n".join(lines)


def _usage(question: Question) -> str:
    if question.yes_no:
        return f"{question.flag}/--no-{question.flag[2:]}"
    if question.choices:
        return f"{question.flag} {'|'.join(question.choices)}"
    return f"{question.flag} {question.metavar}"


def _plain(parse: Callable[[Any], Any]) -> Callable[[Any, Known], Any]:
    return lambda value, known: parse(value)


def name_from_directory(directory: Path) -> str | None:
    # "my-cool_block" -> "My Cool Block": a starting point a person can accept.
    words = [w for w in re.split(r"[-_\s.]+", directory.name) if w]
    return " ".join(w[:1].upper() + w[1:] for w in words) or None


def _derived_block_id(known: Known) -> str | None:
    try:
        return derive_block_id(known["name"])
    except NamingError:
        return None


def _parse_scopes(value: Any, known: Known) -> tuple[str, ...]:
    scopes = o.parse_scopes(value)
    storage = sorted(set(scopes) & STORAGE_SCOPES)
    if known.get("auth") == o.OAUTH and storage:
        raise o.AnswerError(
            f"auth 'oauth' cannot be combined with app storage scopes ({', '.join(storage)});"
            " the platform refuses that manifest at submit"
        )
    return scopes


NAME = Question(
    "name",
    "--name",
    "the block's display name",
    _plain(o.parse_name),
    required=True,
    metavar="NAME",
    default=lambda known: known.get(SUGGESTED_NAME),
    label="Name",
)
BLOCK_ID = Question(
    "block_id",
    "--block-id",
    "the block's id: becomes <id>.civit.ai and the store slug",
    _plain(o.parse_block_id),
    default=_derived_block_id,
    metavar="ID",
    label="Block id",
)
TEMPLATE = Question(
    "template",
    "--template",
    "template: " + "; ".join(f"{t.name}: {t.summary}" for t in TEMPLATES.values()),
    _plain(o.parse_template),
    default=lambda k: DEFAULT_TEMPLATE,
    required=True,
    choices=tuple(TEMPLATES),
    label="Template",
)
SURFACE = Question(
    "surface",
    "--surface",
    "where the block shows: its own page, or a model-page slot (moderators only at launch)",
    _plain(o.parse_surface),
    default=lambda k: PAGE_SURFACE,
    choices=o.SURFACES,
    label="Surface",
)
PACKAGE_MANAGER = Question(
    "package_manager",
    "--package-manager",
    "package manager: sets buildCommand and the lockfile to commit",
    _plain(o.parse_package_manager),
    default=lambda k: DEFAULT_PACKAGE_MANAGER,
    choices=tuple(PACKAGE_MANAGERS),
    label="Package manager",
)
CONTENT_RATING = Question(
    "content_rating",
    "--content-rating",
    "content rating of what the block shows",
    _plain(o.parse_content_rating),
    default=lambda k: o.DEFAULT_CONTENT_RATING,
    required=True,
    choices=CONTENT_RATINGS,
    label="Content rating",
)
CATEGORY = Question(
    "category",
    "--category",
    "store category (optional)",
    _plain(o.parse_category),
    choices=CATEGORIES,
    label="Category (optional)",
)
TAGLINE = Question(
    "tagline",
    "--tagline",
    f"one-line store tagline (optional, at most {LIMITS.tagline_max} characters)",
    _plain(o.parse_tagline),
    label="Tagline (optional)",
)
REPOSITORY = Question(
    "repository",
    "--repository",
    "public source repository, https://github.com/<owner>/<repo> (optional)",
    _plain(o.parse_repository),
    metavar="URL",
    label="Repository URL (optional)",
)
AUTH = Question(
    "auth",
    "--auth",
    "token the host hands the block (oauth adds user:read:self)",
    _plain(o.parse_auth),
    default=lambda k: o.DEFAULT_AUTH,
    choices=AUTH_MODES,
    label="Auth",
)
GOODS = Question(
    "goods",
    "--goods",
    "start a goods catalogue, sold for Buzz (adds goods:purchase:self and goods:read:self)",
    _plain(o.parse_bool),
    default=lambda k: False,
    yes_no=True,
    label="Start a goods catalogue?",
)
SCOPE_LIST = Question(
    "scopes",
    "--scope",
    "scopes the block requests, comma-separated (optional; repeat --scope)",
    _parse_scopes,
    default=lambda k: (),
    metavar="SCOPE",
    label="Scopes (comma-separated)",
)
BUZZ_BUDGET = Question(
    "buzz_budget",
    "--buzz-budget",
    f"Buzz the page may spend per generation (1-{LIMITS.buzz_budget_clamp})",
    _plain(o.parse_buzz_budget),
    default=lambda k: LIMITS.buzz_budget_default,
    metavar="N",
    label="Buzz budget per generation",
)
BOOT_SKELETON = Question(
    "boot_skeleton",
    "--boot-skeleton",
    "paint a loading skeleton in index.html until the app renders",
    _plain(o.parse_bool),
    default=lambda k: True,
    yes_no=True,
    label="Loading skeleton in index.html?",
)


def justification_question(scope: str, template_default: str | None = None) -> Question:
    """The question for a sensitive scope's justification; the goods scope and a template's own scopes
    come with a default text (the developer's own replaces it)."""
    if scope == GOODS_PURCHASE_SCOPE:
        default = lambda k: o.GOODS_JUSTIFICATION  # noqa: E731
    elif template_default is not None:
        default = lambda k: template_default  # noqa: E731
    else:
        default = lambda k: None  # noqa: E731
    return Question(
        f"justification:{scope}",
        "--justify",
        f"why the block needs the sensitive scope {scope} (review reads it)",
        _plain(o.parse_justification),
        default=default,
        required=True,
        metavar=f"'{scope}=TEXT'",
        label=f"Justification for {scope}",
    )


class _Resolver:
    def __init__(self, given: Known, prompter: Prompter | None, use_defaults: bool) -> None:
        self.given = given
        self.prompter = prompter
        self.use_defaults = use_defaults
        self.known: dict[str, Any] = {}
        self.missing: list[Question] = []

    def answer(self, question: Question) -> Any:
        default = question.default(self.known)
        if question.key in self.given:
            value = question.parse(self.given[question.key], self.known)
        elif self.use_defaults and (default is not None or not question.required):
            value = default
        elif self.prompter is not None:
            value = self.prompter.ask(question, default, self.known)
        elif not question.required:
            value = default
        else:
            self.missing.append(question)
            # Carry on with the default so the list names everything missing at once.
            value = default
        self.known[question.key] = value
        return value

    def block_id(self) -> None:
        if "name" not in self.known or self.known["name"] is None:
            self.known["block_id"] = None
            return
        if NAME in self.missing:
            # No name was given: the one carried on with is a guess from the folder, so a blockId
            # it cannot make is no error of the user's; the missing --name is listed (issue 21).
            if BLOCK_ID.key in self.given:
                self.answer(BLOCK_ID)
            else:
                self.known["block_id"] = _derived_block_id(self.known)
            return
        if BLOCK_ID.key not in self.given and _derived_block_id(self.known) is None:
            # Explain why before asking (or failing): the default is gone.
            try:
                derive_block_id(self.known["name"])
            except NamingError as exc:
                if self.prompter is None:
                    raise o.AnswerError(str(exc)) from None
                self.prompter.note(str(exc))
        self.answer(BLOCK_ID)


def resolve(
    given: Known, *, prompter: Prompter | None, use_defaults: bool, suggested_name: str | None = None
) -> o.Answers:
    """Raises MissingAnswers (everything lacking) or options.AnswerError (the first bad answer)."""
    r = _Resolver(given, prompter, use_defaults)
    r.known[SUGGESTED_NAME] = suggested_name
    r.answer(NAME)
    r.block_id()
    template = r.answer(TEMPLATE)
    surface = r.answer(SURFACE)
    if TEMPLATES[template].builds:
        r.answer(PACKAGE_MANAGER)
    else:
        # Kept if given, so check_combination can say why static takes none.
        manager = given.get("package_manager")
        r.known["package_manager"] = None if manager is None else o.parse_package_manager(manager)
    for question in (CONTENT_RATING, CATEGORY, TAGLINE, REPOSITORY, AUTH, GOODS, SCOPE_LIST):
        r.answer(question)
    declared = o.all_scopes(r.known["scopes"], goods=r.known["goods"], auth=r.known["auth"], template=template)
    given_reasons: Mapping[str, str] = given.get("justifications", {})
    # Reasons for undeclared scopes are kept so check_combination refuses them.
    justifications = {s: o.parse_justification(t) for s, t in given_reasons.items() if s not in declared}
    for scope in declared:
        if scope in given_reasons:
            justifications[scope] = o.parse_justification(given_reasons[scope])
        elif scope in o.sensitive(declared):
            justifications[scope] = r.answer(justification_question(scope, TEMPLATES[template].justifications.get(scope)))
    if o.needs_budget(declared, surface):
        r.answer(BUZZ_BUDGET)
    elif "buzz_budget" in given:
        raise o.AnswerError(f"--buzz-budget applies only to a page that declares {BUDGET_SCOPE}")
    r.answer(BOOT_SKELETON)
    if r.missing:
        raise MissingAnswers(r.missing)
    answers = o.Answers(
        name=r.known["name"],
        block_id=r.known["block_id"],
        template=template,
        surface=surface,
        content_rating=r.known["content_rating"],
        package_manager=r.known["package_manager"],
        category=r.known["category"],
        tagline=r.known["tagline"],
        repository=r.known["repository"],
        auth=r.known["auth"],
        goods=r.known["goods"],
        scopes=tuple(r.known["scopes"]),
        justifications=justifications,
        buzz_budget=r.known.get("buzz_budget"),
        boot_skeleton=r.known["boot_skeleton"],
    )
    o.check_combination(answers)
    return answers


def scope_menu() -> str:
    """The scope list a prompt shows, sensitive ones marked."""
    from blockkit.platform import SENSITIVE_SCOPES

    return "\n".join(f"  {s}{'  (sensitive: needs a justification)' if s in SENSITIVE_SCOPES else ''}" for s in SCOPES)
