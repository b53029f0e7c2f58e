"""Hotkeys for local runs, in a wallet folder the caller names.

Local races and tests need real sr25519 keys (the signed-request scheme and
the chain protocol both speak ss58), but they must never touch the operator's
real wallets: every function here takes the wallet folder explicitly, and
nothing defaults to ``~/.bittensor``. Keys made by :func:`ensure_wallet` are
stored unencrypted, which is what throwaway local keys are for; never fund
them. Loading (:func:`load_wallet`) works on any bittensor wallet folder,
encrypted or not.
"""

from __future__ import annotations

from pathlib import Path

import bittensor as bt

LOCAL_WALLET_DIR = Path("wallets")  # relative to the working directory, like ./arena.db


class WalletError(ValueError):
    """A wallet or hotkey is missing or unreadable; the message names the file."""


def _wallet(path: Path, name: str, hotkey: str) -> bt.Wallet:
    for label, value in (("wallet name", name), ("hotkey name", hotkey)):
        if not value or "/" in value or value in (".", ".."):
            raise WalletError(f"invalid {label} {value!r}: use a plain folder name")
    return bt.Wallet(name=name, hotkey=hotkey, path=str(Path(path).expanduser()))


def hotkey_file(path: Path, name: str, hotkey: str) -> Path:
    return Path(path).expanduser() / name / "hotkeys" / hotkey


def ensure_wallet(path: Path, name: str, hotkey: str = "default") -> bt.Wallet:
    """Load the wallet's hotkey, creating the coldkey and hotkey first when missing.

    Idempotent: a second call returns the same keys. Created keys are
    unencrypted (local use only) and no mnemonic is printed.
    """
    wallet = _wallet(path, name, hotkey)
    try:
        if not wallet.coldkeypub_file.exists_on_device():
            wallet.create_new_coldkey(use_password=False, suppress=True)
        if not wallet.hotkey_file.exists_on_device():
            wallet.create_new_hotkey(use_password=False, suppress=True)
    except OSError as exc:
        raise WalletError(f"cannot create wallet {name}/{hotkey} under {path}: {exc}") from exc
    return load_wallet(path, name, hotkey)


def ensure_hotkeys(path: Path, name: str, hotkeys: list[str]) -> list[bt.Wallet]:
    """Several hotkeys under one coldkey (one per local miner)."""
    if len(set(hotkeys)) != len(hotkeys):
        raise WalletError(f"hotkey names must be distinct: {hotkeys}")
    return [ensure_wallet(path, name, hotkey) for hotkey in hotkeys]


def load_wallet(path: Path, name: str, hotkey: str = "default", *, create_hint: bool = False) -> bt.Wallet:
    """An existing wallet whose hotkey can sign; a clear error when it cannot.

    ``create_hint``: the folder holds local keys, so the error names the
    command that makes them (`arena wallet create`)."""
    wallet = _wallet(path, name, hotkey)
    keyfile = hotkey_file(path, name, hotkey)
    if not wallet.hotkey_file.exists_on_device():
        hint = ""
        if create_hint:
            hint = f"; create it with `arena wallet create --wallet.name {name} --wallet.hotkey {hotkey}`"
        raise WalletError(f"no hotkey {hotkey!r} in wallet {name!r}: {keyfile} does not exist{hint}")
    try:
        wallet.unlock_hotkey()
    except Exception as exc:  # the SDK raises several types (KeyfileError, ValueError, OSError)
        raise WalletError(f"cannot read hotkey {keyfile}: {exc}") from exc
    return wallet


def hotkey_address(wallet: bt.Wallet) -> str:
    """The wallet's hotkey ss58, read from the public file when there is one (no password needed)."""
    try:
        if wallet.hotkeypub_file.exists_on_device():
            return wallet.hotkeypub.ss58_address
        return wallet.hotkey.ss58_address
    except Exception as exc:
        raise WalletError(f"cannot read the hotkey of wallet {wallet.name}/{wallet.hotkey_str}: {exc}") from exc
