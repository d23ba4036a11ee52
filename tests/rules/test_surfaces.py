"""BK218 renderMode against the tier, BK219 page requires iframe, BK220/BK221 target slots."""

from __future__ import annotations

import pytest

from blockkit.platform import MODEL_SLOTS

from .conftest import Run, at, codes, manifest

PAGE = {"path": "/", "title": "Demo"}


# --- BK218 --------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["unverified", "verified", "internal"])
def test_iframe_mode_is_open_to_every_tier(run: Run, tier: str) -> None:
    assert run(manifest(renderMode="iframe"), tier=tier) == []
    assert run(manifest(), tier=tier) == []


@pytest.mark.parametrize("mode", ["inline", "hybrid"])
def test_inline_and_hybrid_need_verified_or_internal(run: Run, mode: str) -> None:
    findings = run(manifest(renderMode=mode))
    assert codes(findings) == {"BK218"}
    assert at(findings, "BK218") == ["/renderMode"]
    assert "verified or internal" in findings[0].message and "this app is unverified" in findings[0].message
    assert run(manifest(renderMode=mode), tier="verified") == []
    assert run(manifest(renderMode=mode), tier="internal") == []


def test_an_unknown_mode_is_the_schemas(run: Run) -> None:
    assert codes(run(manifest(renderMode="Inline"))) == {"BK103"}


# --- BK219 --------------------------------------------------------------------------


def test_a_page_with_an_iframe_passes(run: Run) -> None:
    assert run(manifest(page=PAGE)) == []


def test_a_page_without_an_iframe(run: Run) -> None:
    findings = run(manifest(page=PAGE, iframe=...))
    assert codes(findings) == {"BK219"}
    assert at(findings, "BK219") == ["/page"]
    assert '"minHeight": 600' in (findings[0].hint or "")


# --- BK220 / BK221 --------------------------------------------------------------------


@pytest.mark.parametrize("slot", MODEL_SLOTS)
def test_model_slots_are_accepted(run: Run, slot: str) -> None:
    assert run(manifest(targets=[{"slotId": slot}])) == []


def test_an_unknown_slot_suggests_the_close_one(run: Run) -> None:
    findings = run(manifest(targets=[{"slotId": "model.sidebar_top"}, {"slotId": "model.sidebar"}]))
    assert codes(findings) == {"BK220"}
    assert at(findings, "BK220") == ["/targets/1/slotId"]
    assert findings[0].hint == 'did you mean "model.sidebar_top"?'


@pytest.mark.parametrize("slot", ["Model.Sidebar_Top", "model.sidebar_top ", "page", "somewhere.else"])
def test_slot_ids_must_match_exactly(run: Run, slot: str) -> None:
    assert codes(run(manifest(targets=[{"slotId": slot}]))) == {"BK220"}


def test_the_page_slot_is_refused_with_a_pointer_to_page(run: Run) -> None:
    findings = run(manifest(targets=[{"slotId": "app.page"}]))
    assert codes(findings) == {"BK221"}
    assert at(findings, "BK221") == ["/targets/0/slotId"]
    assert 'use "page" instead' in findings[0].message
    with_page = run(manifest(page=PAGE, targets=[{"slotId": "app.page"}]))
    assert "already declared" in (with_page[0].hint or "")


def test_extra_target_keys_and_odd_targets_pass_this_layer(run: Run) -> None:
    document = manifest(targets=[{"slotId": "model.below_images", "priority": 100}])
    assert run(document) == []
    assert codes(run(manifest(targets=[{"slotId": ""}]))) == {"BK105"}
    assert codes(run(manifest(targets=["model.sidebar_top"]))) == {"BK102"}
    assert codes(run(manifest(targets={"slotId": "app.page"}))) == {"BK102"}
