"""java_order reproduces java.util.HashMap<String, V> iteration order (protocol-vote ties)."""

from kafka_emu.coordinator.java_order import bucket, capacity_for, hashmap_order, string_hash


def test_string_hash_matches_java():
    # values Java prints for "...".hashCode()
    assert string_hash("") == 0
    assert string_hash("range") == 108280125
    assert string_hash("Aa") == string_hash("BB") == 2112
    assert string_hash("cooperative-sticky") == 1843682987
    assert string_hash("sticky") == -892259863  # overflows to a negative int
    # UTF-16 code units: a character outside the BMP is two surrogates
    assert string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00


def test_bucket_spreads_the_high_bits():
    # (h ^ h >>> 16) & 15; range = 0x0674_453D -> 0x453D ^ 0x0674 = 0x4349 -> 9
    assert bucket("range", 16) == 9
    assert bucket("cooperative-sticky", 16) == 15


def test_capacity_doubles_past_three_quarters():
    assert [capacity_for(n) for n in (0, 12, 13, 24, 25)] == [16, 16, 32, 32, 64]


def test_hashmap_order_is_bucket_order_then_first_put():
    assert hashmap_order(["cooperative-sticky", "range", "sticky"]) == [
        "sticky", "range", "cooperative-sticky"]
    assert hashmap_order(["bar", "b", "bar"]) == ["bar", "b"]
    assert hashmap_order(["b", "bar"]) == ["b", "bar"]
