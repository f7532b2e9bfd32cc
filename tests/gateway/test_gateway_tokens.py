"""Sealed state tokens: round trips, key rotation, and every way a token can be wrong."""
from __future__ import annotations

import base64
import os

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from api_gateway.tokens import (
    KeyRing,
    KeyRingError,
    Principal,
    Sealed,
    SeatKeyError,
    TokenError,
    host_key,
    new_sealed,
    principal_for,
    seat_key,
)

STATE = b"\x0a\x05kozel\x10\x04" + bytes(range(200))


def ring(*kids: str) -> KeyRing:
    return KeyRing.parse(",".join(KeyRing.generate(k) for k in kids))


def test_a_token_opens_to_what_was_sealed() -> None:
    keys = ring("k1")
    sealed = new_sealed(STATE)
    opened = keys.open(keys.seal(sealed))
    assert opened == sealed
    assert opened.seq == 0 and len(opened.match_id) == 16 and len(opened.secret) == 16


def test_the_same_content_seals_to_different_tokens_and_hides_the_state() -> None:
    keys = ring("k1")
    sealed = new_sealed(STATE)
    first, second = keys.seal(sealed), keys.seal(sealed)
    assert first != second  # a fresh nonce every time
    assert b"kozel" not in base64.urlsafe_b64decode(first.split(".")[2] + "==")


def test_advancing_keeps_the_match_and_counts_versions() -> None:
    sealed = new_sealed(STATE)
    later = sealed.advanced(b"other").advanced(b"third")
    assert (later.match_id, later.secret, later.seq, later.state) == (sealed.match_id, sealed.secret, 2, b"third")
    assert new_sealed(STATE).match_id != sealed.match_id


def test_rotation_seals_with_the_newest_and_opens_with_any_held_key() -> None:
    old_entry, new_entry = KeyRing.generate("old"), KeyRing.generate("new")
    before = KeyRing.parse(old_entry)
    during = KeyRing.parse(f"{new_entry},{old_entry}")
    after = KeyRing.parse(new_entry)
    sealed = new_sealed(STATE)
    old_token = before.seal(sealed)
    assert during.open(old_token) == sealed           # issued before the rotation: still good
    new_token = during.seal(sealed)
    assert new_token.startswith("v1.new.")            # answers carry the newest key
    assert after.open(new_token) == sealed
    with pytest.raises(TokenError, match="retired or foreign"):
        after.open(old_token)                          # the old key was retired


def _flip(token: str, index: int) -> str:
    chars = list(token)
    chars[index] = "A" if chars[index] != "A" else "B"
    return "".join(chars)


def test_every_altered_character_of_the_data_is_refused() -> None:
    keys = ring("k1")
    for size in range(3):  # every remainder of the data length mod 3 (the last character's spare bits)
        token = keys.seal(new_sealed(STATE + b"x" * size))
        start = len("v1.k1.")
        for index in range(start, len(token)):
            with pytest.raises(TokenError):
                keys.open(_flip(token, index))


def test_a_last_character_differing_only_in_spare_bits_is_refused() -> None:
    """base64 decoders ignore the spare low bits of the last character; the token reader does not."""
    keys = ring("k1")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for size in range(3):
        token = keys.seal(new_sealed(STATE + b"x" * size))
        spare = {0: 0, 2: 4, 3: 2}[len(token.split(".")[2]) % 4]
        if not spare:
            continue
        last = alphabet.index(token[-1])
        twin = token[:-1] + alphabet[last ^ 1]  # flip a spare bit: decodes to the same bytes
        assert base64.urlsafe_b64decode(twin.split(".")[2] + "==") == \
            base64.urlsafe_b64decode(token.split(".")[2] + "==")
        with pytest.raises(TokenError):
            keys.open(twin)


def test_truncated_and_extended_tokens_are_refused() -> None:
    keys = ring("k1")
    token = keys.seal(new_sealed(STATE))
    for cut in range(0, len(token), 7):
        with pytest.raises(TokenError):
            keys.open(token[:cut])
    for extra in ("A", "AA", "AAAA", ".x"):
        with pytest.raises(TokenError):
            keys.open(token + extra)


def test_foreign_and_relabelled_tokens_are_refused() -> None:
    ours, theirs = ring("k1", "k2"), ring("k1")
    sealed = new_sealed(STATE)
    with pytest.raises(TokenError, match="altered or not issued"):
        ours.open(theirs.seal(sealed))                 # same key id, another service's key
    token = ours.seal(sealed)
    with pytest.raises(TokenError, match="altered or not issued"):
        ours.open(token.replace("v1.k1.", "v1.k2.", 1))  # the key id is authenticated


@pytest.mark.parametrize("bad", [None, 42, "", "v1", "v1..", "v2.k1.AAAA", "v1.k1.", "v1.k1.!!!!",
                                 "v1.k1.A=", "v1.k1.ÄÖÜ", "v1.k1.\ud800", "x" * 70000, ["v1.k1.AAAA"]])
def test_garbage_is_a_token_error(bad: object) -> None:
    with pytest.raises(TokenError):
        ring("k1").open(bad)


def test_seat_keys_name_their_seat_and_only_their_seat() -> None:
    sealed = new_sealed(STATE)
    keys = [seat_key(sealed, s) for s in range(4)]
    assert len(set(keys)) == 4
    for s, key in enumerate(keys):
        assert principal_for(sealed, key) == Principal(s)
    assert principal_for(sealed, host_key(sealed)) == Principal(None)
    assert principal_for(sealed, host_key(sealed)).is_host


def test_seat_keys_survive_key_rotation() -> None:
    """They hang on the match's secret, which travels inside the token, not on the server keys."""
    sealed = new_sealed(STATE)
    key = seat_key(sealed, 2)
    rotated = ring("new")
    reopened = rotated.open(rotated.seal(sealed))
    assert principal_for(reopened, key) == Principal(2)


def test_wrong_seat_keys_are_refused() -> None:
    """Only the keys made from the match's secret pass. (A seat's key is only ever made for the match's
    own seats; a seat beyond them would be refused by the engine as a `view_as` out of range.)"""
    sealed, other = new_sealed(STATE), new_sealed(STATE)
    good = seat_key(sealed, 1)
    forged_seat = "2" + good[1:]                        # someone else's seat with my tag
    tag_flipped = good[:-1] + ("A" if good[-1] != "A" else "B")
    for bad in (seat_key(other, 1), host_key(other), forged_seat, tag_flipped, "1", "1.", ".", "",
                "host.", "4." + good[2:], "01" + good[1:], "٣" + good[1:],
                good + "x", "\u00e9" + good, None, 1):
        with pytest.raises(SeatKeyError):
            principal_for(sealed, bad)


def test_key_ring_parsing() -> None:
    raw = bytes(range(32))
    standard = base64.b64encode(raw).decode()
    urlsafe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert KeyRing.parse(f" a:{standard} , b:{urlsafe} ,").ids == ["a", "b"]
    assert KeyRing.parse(f"a:{standard}").current == "a"
    for text, message in [("", "no keys"), ("a", "kid:base64key"), (f"a:{standard},a:{standard}", "twice"),
                          ("a:c2hvcnQ=", "16, 24 or 32"), ("a:***", "not base64"),
                          (f"bad id:{standard}", "key id"), (f"{'x' * 33}:{standard}", "key id")]:
        with pytest.raises(KeyRingError, match=message):
            KeyRing.parse(text)


def test_key_ring_errors_never_quote_the_key() -> None:
    secret = base64.b64encode(b"s" * 31).decode()
    with pytest.raises(KeyRingError) as caught:
        KeyRing.parse(f"k:{secret}")
    assert secret not in str(caught.value)


def test_generated_entries_are_256_bit_keys() -> None:
    entry = KeyRing.generate("k9")
    kid, _, key = entry.partition(":")
    assert kid == "k9" and len(base64.b64decode(key)) == 32
    assert KeyRing.parse(entry).ids == ["k9"]


def _hand_sealed(keys: KeyRing, envelope: bytes) -> str:
    """A token of `envelope` sealed by hand under "k1" (white box): authentic, whatever the envelope says."""
    aead: AESGCM = keys._keys["k1"]
    nonce = os.urandom(12)
    body = base64.urlsafe_b64encode(nonce + aead.encrypt(nonce, envelope, b"domino-state-token:v1:k1"))
    return "v1.k1." + body.decode().rstrip("=")


def test_an_envelope_of_another_version_is_refused() -> None:
    keys = ring("k1")
    sealed = Sealed(b"m" * 16, b"s" * 16, 0, STATE)
    future = _hand_sealed(keys, b"\x03" + b"m" * 16 + b"s" * 16 + (0).to_bytes(4, "big") + STATE)
    assert keys.open(keys.seal(sealed)) == sealed
    with pytest.raises(TokenError, match="envelope version 3"):
        keys.open(future)


def test_a_token_of_the_version_1_envelope_opens_and_its_match_goes_on_in_it() -> None:
    """Gateways before issue 27 sealed envelope version 1 (a 32-byte secret, an 8-byte version count): such a
    token opens, its seat keys still pass, and its next versions are sealed in version 1, which keeps them;
    a new match's envelope (version 2) is 20 bytes (26 or 27 characters) shorter."""
    keys = ring("k1")
    old = _hand_sealed(keys, b"\x01" + b"m" * 16 + b"s" * 32 + (7).to_bytes(8, "big") + STATE)
    opened = keys.open(old)
    assert opened == Sealed(b"m" * 16, b"s" * 32, 7, STATE)
    key = seat_key(opened, 2)
    assert principal_for(opened, key) == Principal(2)
    later = keys.open(keys.seal(opened.advanced(b"next")))
    assert later == Sealed(b"m" * 16, b"s" * 32, 8, b"next") and principal_for(later, key) == Principal(2)
    assert len(keys.seal(opened)) - len(keys.seal(Sealed(b"m" * 16, b"s" * 16, 7, STATE))) in (26, 27)


def test_the_base64url_reader_accepts_exactly_what_the_writer_writes() -> None:
    """`tokens._b64decode` (the strict decoder and a look at the last character) against its definition:
    decode leniently, then accept only if encoding again gives the same text. Every encoding of 0-11
    bytes, and those strings with characters changed, inserted or removed (inside the alphabet and out)."""
    import binascii
    import random
    import re

    from api_gateway.tokens import _b64decode, _b64encode

    def reference(text: str) -> bytes | None:
        if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
            return None
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except binascii.Error:
            return None
        return raw if _b64encode(raw) == text else None

    def fast(text: str) -> bytes | None:
        try:
            return _b64decode(text)
        except (binascii.Error, ValueError):
            return None

    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \n.*\u00e9"
    rng = random.Random(27)
    for _ in range(20000):
        chars = list(_b64encode(rng.randbytes(rng.randrange(12))))
        for _ in range(rng.randrange(3)):
            where = rng.randrange(len(chars) + 1)
            change = rng.randrange(3)
            if change == 0 and where < len(chars):
                chars[where] = rng.choice(alphabet)
            elif change == 1:
                chars.insert(where, rng.choice(alphabet))
            elif where < len(chars):
                del chars[where]
        text = "".join(chars)
        assert fast(text) == reference(text), text
