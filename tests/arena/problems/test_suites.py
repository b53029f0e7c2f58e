"""Versioned suites: partitions by leak cluster, rotation, the ledger, sealed banks.

Suites are built for real (clustering, partitioning, files on disk) from the
900 official tasks and from a small hand-written task file whose clusters are
known by construction: groups of restatements of one problem (same gold,
same constraints, shuffled wording), each group's words disjoint from the others'.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import orjson
import pytest

from arena.problems.draw import BankExhausted, draw, partition_at, record_draw, retire
from arena.problems.ledger import EventKind, LedgerError, append_event
from arena.problems.official import load_problems
from arena.problems.partitions import PartitionName, PartitionPlan, partition_problems
from arena.problems.sealed_banks import import_sealed_bank, seal_bank
from arena.problems.suites import (
    LEDGER,
    PARTITION_FILES,
    Suite,
    SuiteError,
    build_suite,
    check_suite,
    write_suite,
)
from tests.conftest import REPO, official_dir

GROUPS = 40  # hand-written problems: 40 underlying problems (clusters), 1-3 restatements each
SMALL_PLAN = PartitionPlan(public=6, heldout_fraction=0.2)


def _words(group: int, k: int = 9) -> list[str]:
    rng = random.Random(group)
    return ["".join(rng.choice("bcdfghjklmnpqrstvwz") + rng.choice("aeiou") for _ in range(3)) for _ in range(k)]


def hand_rows() -> list[dict]:
    """Official-shape rows. Group g is one problem stated 1 + g % 3 times (word order shuffled)."""
    rows = []
    for g in range(GROUPS):
        words = _words(g)
        intent = ("product", "shop", "voucher", "knowledge")[g % 4]
        gold = {"product_id": f"9{g:03d}0", "title": [" ".join(words[:4])], "price": [{"less than": [0, 50 + g]}]}
        if g % 8 < 4:  # more constraints on half of the groups, so difficulties differ
            gold["attributes"] = [{"colour": [words[5]]}, {"size": [words[6]]}]
        for v in range(1 + g % 3):
            query = " ".join(random.Random(100 * g + v).sample(words, len(words)))
            second = {"product_id": f"9{g:03d}1", "title": [words[7]]}
            if intent == "product":
                rows.append({"query": query, "reward": gold})
            elif intent == "shop":
                rows.append({"query": query, "reward": [gold, second]})
            elif intent == "voucher":
                voucher = {"voucher_type": "platform", "threshold": 40.0, "discount_type": "fixed",
                           "face_value": 5.0, "budget": 100.0 + g}  # fmt: skip
                rows.append({"query": query, "reward": [gold, second], "voucher": voucher})
            else:
                product = {"product_id": f"9{g:03d}0", "title": " ".join(words[:4]), "price": 10.0 + g}
                rows.append({"query": query, "Knowledge_Attribute": words[8], "reward": product})
    return rows


@pytest.fixture(scope="module")
def hand_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hand") / "hand.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in hand_rows()))
    return path


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory, hand_file) -> Path:
    """A pristine small suite; tests that change it work on a copy (`fresh`)."""
    out = tmp_path_factory.mktemp("small") / "suite"
    build_suite(load_problems(hand_file), out, seed="small-seed", plan=SMALL_PLAN, sources=[hand_file])
    return out


@pytest.fixture
def fresh(small_suite, tmp_path) -> Suite:
    target = tmp_path / "suite"
    shutil.copytree(small_suite, target)
    return Suite(target)


@pytest.fixture(scope="module")
def official_suite(tmp_path_factory) -> Suite:
    folder = official_dir()
    problems = load_problems(*sorted(folder.glob("*.jsonl")))
    return build_suite(problems, tmp_path_factory.mktemp("official") / "suite", seed="official-seed")


def clusters_of(suite: Suite) -> dict[PartitionName, set[str]]:
    return {name: {p.cluster_id for p in suite.problems(name)} for name in PartitionName}


def writable(path: Path) -> Path:
    """Open a read-only suite file (and its folder) for a deliberate tamper."""
    path.parent.chmod(stat.S_IRWXU)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    return path


# --- partitions ------------------------------------------------------------------------------


def test_official_partitions_share_no_cluster_and_hold_every_problem(official_suite):
    suite = official_suite
    clusters = clusters_of(suite)
    names = list(PartitionName)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not clusters[a] & clusters[b], f"{a} and {b} share clusters"
    ids = [p.id for name in PartitionName for p in suite.problems(name)]
    assert len(ids) == len(set(ids)) == 900 == suite.manifest.problem_count
    manifest = suite.manifest
    assert manifest.cluster_count == sum(len(c) for c in clusters.values())
    # Public: 30 problems, balanced across the four intents as far as whole clusters allow.
    public = manifest.counts[PartitionName.public]
    assert public.problems == 30 and set(public.by_intent) == {"product", "shop", "voucher", "knowledge"}
    assert max(public.by_intent.values()) - min(public.by_intent.values()) <= 2
    assert len(public.by_difficulty) == 3  # easy, medium and hard all present
    # Held-out: 20% of all clusters, stratified, so every intent is represented.
    assert len(clusters[PartitionName.heldout]) == round(0.2 * manifest.cluster_count)
    assert set(manifest.counts[PartitionName.heldout].by_intent) == {"product", "shop", "voucher", "knowledge"}
    assert manifest.counts[PartitionName.train_pool].problems == 0  # initially empty by default
    assert check_suite(suite.path) == []


def test_published_files_are_read_only_and_the_seed_is_sealed(small_suite):
    for relative in PARTITION_FILES.values():
        assert not (small_suite / relative).stat().st_mode & 0o222, relative
    assert not (small_suite / "sealed").stat().st_mode & 0o222
    public_manifest = json.loads((small_suite / "public" / "manifest.json").read_text())
    assert "seed" not in public_manifest and "small-seed" not in (small_suite / "public" / "manifest.json").read_text()
    assert Suite(small_suite).manifest.seed == "small-seed"


def test_hand_written_variants_stay_together(small_suite, hand_file):
    suite = Suite(small_suite)
    assert suite.manifest.cluster_count == GROUPS  # the clustering found exactly the groups written
    home: dict[str, PartitionName] = {}
    for name in PartitionName:
        for problem in suite.problems(name):
            group = problem.rewards[0].product_id if problem.rewards else problem.knowledge.product.product_id
            assert home.setdefault(group, name) is name, f"group {group} split across {home[group]} and {name}"
    assert suite.manifest.counts[PartitionName.public].problems == 6
    assert len(suite.manifest.clusters[PartitionName.heldout]) == 8  # 0.2 of 40 clusters
    assert (
        suite.manifest.sources[0].name == hand_file.name
        and suite.manifest.sources[0].problems == len(hand_rows()) == 79
    )


def test_same_seed_same_suite_other_seed_other_partition(small_suite, hand_file, tmp_path):
    problems = load_problems(hand_file)
    again = build_suite(problems, tmp_path / "again", seed="small-seed", plan=SMALL_PLAN)
    assert again.manifest.content_hash == Suite(small_suite).manifest.content_hash
    other = build_suite(problems, tmp_path / "other", seed="another-seed", plan=SMALL_PLAN)
    assert other.manifest.clusters != again.manifest.clusters
    with pytest.raises(SuiteError, match="already exists"):
        build_suite(problems, tmp_path / "again", seed="small-seed", plan=SMALL_PLAN)


def test_a_suite_with_a_cluster_in_two_partitions_is_never_published(hand_file, tmp_path):
    from arena.problems.clusters import assign_clusters

    groups = partition_problems(assign_clusters(load_problems(hand_file)), "s", SMALL_PLAN)
    stolen = groups[PartitionName.race_bank][0]
    groups[PartitionName.heldout].append(stolen.model_copy(update={"id": "p-copy"}))
    with pytest.raises(SuiteError, match=f"cluster {stolen.cluster_id} is in two partitions"):
        write_suite(groups, tmp_path / "bad", seed="s", plan=SMALL_PLAN, clustering=None)
    assert not (tmp_path / "bad").exists() and list(tmp_path.iterdir()) == []


def test_partitioning_refuses_bad_input(hand_file):
    problems = load_problems(hand_file)  # no cluster ids yet
    with pytest.raises(ValueError, match=f"problem {problems[0].id} .*has no leak cluster id"):
        partition_problems(problems, "s")
    clustered = [p.model_copy(update={"cluster_id": f"c{i}"}) for i, p in enumerate(problems)]  # 79 singletons
    with pytest.raises(ValueError, match="heldout needs 16 clusters but only 0 are left"):
        partition_problems(clustered, "s", PartitionPlan(public=1000))
    with pytest.raises(ValueError, match="race bank would be empty: 79 clusters, 0 public, 40 held out, 39 in the"):
        partition_problems(clustered, "s", PartitionPlan(public=0, heldout_fraction=0.5, train_fraction=0.49))
    with pytest.raises(ValueError, match="problem id p-x appears twice"):
        partition_problems([clustered[0].model_copy(update={"id": "p-x"})] * 2, "s")


# --- check ---------------------------------------------------------------------------------


def test_check_names_a_changed_problem_file(fresh):
    target = writable(fresh.path / "sealed" / "heldout.jsonl")
    lines = target.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"query":"', '"query":"tampered ', 1)
    target.write_text("".join(lines))
    failures = check_suite(fresh.path)
    assert any(f.startswith("sealed/heldout.jsonl: sha256") and "changed after publication" in f for f in failures)


def test_check_names_a_file_added_after_publication(fresh):
    fresh.path.joinpath("sealed").chmod(stat.S_IRWXU)
    (fresh.path / "sealed" / "bonus.jsonl").write_text("")
    assert check_suite(fresh.path) == [
        "sealed/bonus.jsonl: not part of the suite (nothing may be added after publication)"
    ]


def test_check_names_a_cluster_moved_into_two_partitions(fresh):
    bank_cluster = fresh.manifest.clusters[PartitionName.race_bank][0]
    target = writable(fresh.path / "sealed" / "heldout.jsonl")
    row = orjson.loads(target.read_bytes().splitlines()[0])
    row["cluster_id"] = bank_cluster
    target.write_bytes(b"\n".join([orjson.dumps(row), *target.read_bytes().splitlines()[1:]]) + b"\n")
    failures = check_suite(fresh.path)
    assert any(f"cluster {bank_cluster} is in two partitions: race_bank and heldout" in f for f in failures)
    assert any("sealed/heldout.jsonl: sha256" in f for f in failures)


def test_check_names_an_edited_or_removed_ledger_line(fresh):
    record_draw(fresh, 1, "aa", 3)
    record_draw(fresh, 2, "bb", 3)
    assert check_suite(fresh.path) == []
    ledger = fresh.path / LEDGER
    pristine = ledger.read_bytes()
    lines = pristine.splitlines()
    first = orjson.loads(lines[0])
    first["cluster_ids"][0] = fresh.manifest.clusters[PartitionName.race_bank][-1]  # claim another cluster was raced
    ledger.write_bytes(b"\n".join([orjson.dumps(first), lines[1]]) + b"\n")
    failures = check_suite(fresh.path)
    assert any(f.startswith("ledger.jsonl:1: hash does not match") for f in failures), failures
    ledger.write_bytes(lines[1] + b"\n")  # the first event removed
    failures = check_suite(fresh.path)
    assert any(f.startswith("ledger.jsonl:1: seq is 2") for f in failures), failures
    assert any(f.startswith("ledger.jsonl:1: prev_hash does not match") for f in failures), failures
    with pytest.raises(LedgerError, match="not intact"):
        draw(fresh, 3, "cc", 1)  # nothing is drawn from a broken ledger
    ledger.write_bytes(pristine)
    assert check_suite(fresh.path) == []


def test_check_names_a_revealed_heldout_cluster(fresh):
    heldout = fresh.manifest.clusters[PartitionName.heldout][0]
    append_event(
        fresh.ledger_path, fresh.manifest.content_hash, cycle=1, kind=EventKind.revealed,
        decide=lambda events: [heldout], draw_seed="ab",
    )  # fmt: skip
    failures = check_suite(fresh.path)
    assert failures == [f"ledger.jsonl: seq 1: held-out cluster {heldout} was revealed (held-out is never raced)"]
    with pytest.raises(LedgerError, match="unsound"):
        record_draw(fresh, 2, "ab", 1)


# --- rotation ------------------------------------------------------------------------------


def test_draw_is_deterministic_and_one_problem_per_bank_cluster(small_suite):
    suite = Suite(small_suite)
    first = draw(suite, 5, "0xC0FFEE", 6)
    assert first == draw(Suite(small_suite), 5, "c0ffee", 6)  # same inputs, same draw (0x and case ignored)
    assert first != draw(suite, 5, "c0ffef", 6) and first != draw(suite, 6, "c0ffee", 6)
    bank = {p.id: p.cluster_id for p in suite.problems(PartitionName.race_bank)}
    assert set(first) <= set(bank) and len({bank[pid] for pid in first}) == 6
    with pytest.raises(SuiteError, match="not a hex string"):
        draw(suite, 5, "not-hex", 1)


def test_rotation_never_repeats_a_cluster_until_the_bank_is_exhausted(fresh):
    bank = {p.id: p.cluster_id for p in fresh.problems(PartitionName.race_bank)}
    heldout_ids = {p.id for p in fresh.problems(PartitionName.heldout)}
    size = len(fresh.manifest.clusters[PartitionName.race_bank])
    n, seen, cycle = 4, [], 0
    while size - len(seen) >= n:
        cycle += 1
        drawn = record_draw(fresh, cycle, f"{cycle:04x}", n)
        assert not set(drawn) & heldout_ids
        seen.extend(bank[pid] for pid in drawn)
        retire(fresh, cycle)
    assert len(seen) == len(set(seen))  # no cluster twice
    left = size - len(seen)
    with pytest.raises(BankExhausted, match=f"only {left} of the bank's {size} clusters are unrevealed"):
        draw(fresh, cycle + 1, "ff", n)
    if left:
        seen.extend(bank[pid] for pid in record_draw(fresh, cycle + 1, "ff", left))
        cycle += 1
    assert sorted(seen) == fresh.manifest.clusters[PartitionName.race_bank]  # every bank cluster, once
    with pytest.raises(BankExhausted, match=f"all {size} bank clusters were revealed before cycle {cycle + 1}"):
        draw(fresh, cycle + 1, "ff", 1)
    assert check_suite(fresh.path) == []


def test_partition_at_rebuilds_every_past_state(fresh):
    built = partition_at(fresh, 0)
    first = record_draw(fresh, 1, "01", 3)
    retire(fresh, 1)
    second = record_draw(fresh, 2, "02", 3)
    bank = {p.id: p.cluster_id for p in fresh.problems(PartitionName.race_bank)}
    one, two = sorted(bank[p] for p in first), sorted(bank[p] for p in second)
    assert built.race_bank == fresh.manifest.clusters[PartitionName.race_bank] and built.train_pool == []
    after_reveal = partition_at(fresh, 1)
    assert after_reveal.revealed == one and not set(one) & set(after_reveal.race_bank)
    after_retire = partition_at(fresh, 2)
    assert after_retire.revealed == [] and after_retire.train_pool == one
    now = partition_at(fresh)
    assert now.seq == 3 and now.revealed == two and now.train_pool == one
    assert len(now.race_bank) == len(built.race_bank) - 6 and now.heldout == built.heldout
    # A past cycle's draw recomputes exactly, whatever happened since.
    assert draw(fresh, 1, "01", 3) == first and draw(fresh, 2, "02", 3) == second
    with pytest.raises(SuiteError, match="seq 9 is outside the ledger"):
        partition_at(fresh, 9)


def test_a_cycle_is_recorded_once_and_only_forward(fresh):
    record_draw(fresh, 3, "aa", 2)
    with pytest.raises(SuiteError, match="cycle 3 already has a recorded reveal"):
        record_draw(fresh, 3, "aa", 2)
    with pytest.raises(SuiteError, match="already at cycle 3; cannot record cycle 2"):
        record_draw(fresh, 2, "aa", 2)
    retire(fresh, 3)
    with pytest.raises(SuiteError, match="nothing to retire"):
        retire(fresh, 3)


# --- sealed banks ----------------------------------------------------------------------------


def test_seal_and_import_round_trip(small_suite, tmp_path):
    digest = seal_bank(small_suite, tmp_path / "bank.tar.gz")
    assert digest == seal_bank(small_suite, tmp_path / "again.tar.gz")  # deterministic bytes
    with tarfile.open(tmp_path / "bank.tar.gz") as tar:
        names = tar.getnames()
        assert names == sorted(names) and all(n == "sealed" or n.startswith("sealed/") for n in names)
        assert {m.mtime for m in tar} == {0} and {m.uid for m in tar} == {0}
    whole = import_sealed_bank(
        tmp_path / "bank.tar.gz", digest.upper(), tmp_path / "whole", public=small_suite / "public"
    )
    assert check_suite(whole.path) == []
    for relative in [*PARTITION_FILES.values(), "sealed/manifest.json"]:
        assert (whole.path / relative).read_bytes() == (small_suite / relative).read_bytes()
    bare = import_sealed_bank(tmp_path / "bank.tar.gz", digest, tmp_path / "bare")
    assert check_suite(bare.path) == ["public/qualifying.jsonl: missing", "public/manifest.json: missing"]
    assert draw(bare, 1, "abc", 5) == draw(Suite(small_suite), 1, "abc", 5)  # the sealed part alone can race
    with pytest.raises(SuiteError, match="never overwrites"):
        import_sealed_bank(tmp_path / "bank.tar.gz", digest, tmp_path / "bare")


def test_import_refuses_a_sha_mismatch(small_suite, tmp_path):
    digest = seal_bank(small_suite, tmp_path / "bank.tar.gz")
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    with pytest.raises(SuiteError, match=f"sha256 {digest} does not match the expected {wrong}; refusing"):
        import_sealed_bank(tmp_path / "bank.tar.gz", wrong, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def _archive(path: Path, members: list[tuple[str, bytes | None, str | None]]) -> str:
    """A tar.gz with (name, content, symlink target) members; returns its sha256."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data or b"")
                tar.addfile(info, io.BytesIO(data or b""))
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "evil",
    [("sealed/../../evil.txt", b"x", None), ("../evil.txt", b"x", None), ("/tmp/evil.txt", b"x", None),
     ("sealed/link", None, "/etc/passwd"), ("other/evil.txt", b"x", None)],
)  # fmt: skip
def test_import_refuses_members_outside_sealed(small_suite, tmp_path, evil):
    manifest = (small_suite / "sealed" / "manifest.json").read_bytes()
    archive = tmp_path / "work" / "evil.tar.gz"
    archive.parent.mkdir()
    digest = _archive(archive, [("sealed/manifest.json", manifest, None), evil])
    with pytest.raises(SuiteError, match="refusing"):
        import_sealed_bank(archive, digest, tmp_path / "work" / "dest")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["evil.tar.gz", "work"]


# --- the command ---------------------------------------------------------------------------

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([ARENA, "suite", *map(str, args)], capture_output=True, text=True, cwd=REPO)


def test_cli_build_check_draw_seal_import(hand_file, tmp_path):
    suite = tmp_path / "suite"
    done = arena("build", "--problems", hand_file, "--out", suite, "--seed", "cli", "--public", "6", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["problems"] == 79 and summary["partitions"]["public"]["problems"] == 6
    assert arena("check", suite).returncode == 0

    drawn = arena("draw", suite, "--cycle", "1", "--draw-seed", "0xabc", "--n", "4", "--record")
    assert drawn.returncode == 0, drawn.stderr
    ids = json.loads(drawn.stdout)
    assert ids == json.loads(arena("draw", suite, "--cycle", "1", "--draw-seed", "abc", "--n", "4").stdout)
    assert arena("draw", suite, "--cycle", "1", "--draw-seed", "abc", "--record").returncode == 2
    assert (
        json.loads(arena("retire", suite, "--cycle", "1").stdout)
        == json.loads(arena("show", suite, "--seq", "1").stdout)["revealed"]
    )

    sealed = arena("seal", suite, "--out", tmp_path / "bank.tar.gz")
    digest = sealed.stdout.strip()
    assert sealed.returncode == 0 and len(digest) == 64
    copy = tmp_path / "copy"
    bad = arena("import", tmp_path / "bank.tar.gz", "--sha256", "0" * 64, "--out", copy)
    assert bad.returncode == 2 and "does not match" in bad.stderr and not copy.exists()
    imported = arena(
        "import", tmp_path / "bank.tar.gz", "--sha256", digest, "--out", copy, "--public", suite / "public"
    )
    assert imported.returncode == 0, imported.stderr
    assert arena("check", copy).returncode == 0

    writable(suite / "sealed" / "race_bank.jsonl").write_text("")
    failed = arena("check", suite)
    assert failed.returncode == 1 and "FAIL sealed/race_bank.jsonl: sha256" in failed.stderr
    refused = arena("draw", suite, "--cycle", "2", "--draw-seed", "ab", "--n", "1")
    assert refused.returncode == 2 and "race_bank.jsonl: sha256 differs from the manifest" in refused.stderr


def test_cli_build_says_where_the_secret_seed_is_kept_and_prints_counts_for_people(hand_file, tmp_path):
    """`--seed "$(openssl rand -hex 32)"` as the operator guide has it: the operator never saw the seed, so the
    command says where it is kept (without printing it); the per-intent counts are words, not a Python dict."""
    suite, seed = tmp_path / "suite", "a1b2c3d4e5f60718293a4b5c6d7e8f90"
    done = arena("build", "--problems", hand_file, "--out", suite, "--seed", seed, "--public", "6", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["seed_file"] == str(suite / "sealed" / "manifest.json")
    assert json.loads((suite / "sealed" / "manifest.json").read_text())["seed"] == seed
    assert f"{suite / 'sealed' / 'manifest.json'}" in done.stderr and "keep it secret" in done.stderr
    assert seed not in done.stderr + done.stdout  # logs are no place for a secret
    public = next(line for line in done.stderr.splitlines() if line.strip().startswith("public"))
    assert "{" not in public and "'" not in public, public
    assert "6 problems" in public and "product " in public, public
