from __future__ import annotations

from blockkit.identity_cache import IdentityCache


def test_a_value_is_made_once_per_object_and_never_shared_by_equal_objects() -> None:
    made: list[object] = []
    cache: IdentityCache[int] = IdentityCache(8)

    def make(owner: list[int]) -> int:
        made.append(owner)
        return sum(owner)

    first, twin = [1, 2], [1, 2]
    assert cache.get(first, make) == 3 and cache.get(first, make) == 3
    assert len(made) == 1
    assert cache.get(twin, make) == 3 and len(made) == 2  # equal, but another object


def test_past_its_size_the_cache_starts_over() -> None:
    made: list[object] = []
    cache: IdentityCache[int] = IdentityCache(2)
    owners = [[n] for n in range(3)]
    for owner in owners:
        cache.get(owner, lambda o: made.append(o) or len(made))
    assert cache.get(owners[2], lambda o: -1) == 3  # kept after the restart
    assert cache.get(owners[0], lambda o: -1) == -1  # dropped by it
