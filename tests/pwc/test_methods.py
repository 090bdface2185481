"""``pwc method`` / ``pwc method list`` against a real local HTTP stub (§2.11, §6 cases 26–27)."""

from __future__ import annotations

import pytest

from tests.pwc.stub import StubCatalog
from tests.pwc.test_tasks import json_data, run_cli, stub, wire  # noqa: F401 - stub is a fixture

AREAS = {"count": 2, "results": [{"id": 1, "name": "General"}, {"id": 6, "name": "Audio"}]}
TRANSFORMER = {"id": 2, "slug": "transformer", "name": "Transformer", "full_name": "Transformer",
               "description": "Attention\nonly.", "area_id": 1, "introduced_year": 2017, "paper_count": 13086,
               "source_url": "/paper/1706.03762", "source_title": "Attention Is All You Need"}
WAV2VEC = {"count": 1, "results": [{"id": 20, "slug": "wav2vec-2", "name": "wav2vec 2.0",
                                    "full_name": "wav2vec 2.0", "area_id": 6, "introduced_year": 2020,
                                    "paper_count": 45}]}


def test_method_detail_captured(stub: StubCatalog) -> None:
    stub.routes.update({"methods/": {"count": 1, "results": [TRANSFORMER]}, "methods/2": TRANSFORMER,
                        "areas/": AREAS})
    code, out, err = run_cli(stub.url, ["method", "--name", "Transformer"])
    assert (code, err) == (0, "")
    assert stub.calls == [("methods/", wire(q="Transformer", page=1, page_size=100)), ("methods/2", {}),
                          ("areas/", wire(page=1, page_size=500, ordering="name"))]
    assert out == ("# Transformer\n\nArea: General · Introduced: 2017 · 13,086 papers\n\nAttention only.\n\n"
                   "[Attention Is All You Need](https://paperswithcode.co/paper/1706.03762)\n\n"
                   "[View method](https://paperswithcode.co/methods/transformer)\n")


def test_method_detail_by_number_on_a_tty(stub: StubCatalog) -> None:
    stub.routes.update({"methods/2": {**TRANSFORMER, "source_url": None}, "areas/": AREAS})
    code, out, _ = run_cli(stub.url, ["method", "--name", "2"], isatty=True)
    assert code == 0
    assert stub.paths() == ["methods/2", "areas/"]
    assert out.startswith("Transformer\n\nArea: General")
    assert out.endswith("\n\nView method: https://paperswithcode.co/methods/transformer\n")


def test_method_detail_json_matches_full_name(stub: StubCatalog) -> None:
    other = {**TRANSFORMER, "id": 3, "slug": "vit", "name": "ViT", "full_name": "Vision Transformer"}
    stub.routes.update({"methods/": {"results": [TRANSFORMER, other]}, "methods/3": other, "areas/": AREAS})
    code, out, _ = run_cli(stub.url, ["method", "--name", " vision transformer ", "--json"])
    assert code == 0
    assert json_data(out) == {"method": other, "area": {"id": 1, "name": "General"}}


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["method"], "pwc: method inspection requires --name\n", id="no-name"),
    pytest.param(["method", "--name", "Nope"], "pwc: Method not found: Nope; closest results: Transformer\n",
                 id="not-found"),
])
def test_method_detail_errors(stub: StubCatalog, argv: list, message: str) -> None:
    stub.routes["methods/"] = {"results": [TRANSFORMER]}
    assert run_cli(stub.url, argv) == (4, "", message)


def test_method_list_resolves_area_and_sends_filters(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "methods/": WAV2VEC})
    code, out, _ = run_cli(stub.url, ["method", "list", "--area", "6", "--search", "wav2vec",
                                      "--introduced-year", "2020"])
    assert code == 0
    assert stub.calls[1] == ("methods/", wire(page=1, page_size=50, q="wav2vec", area_id="6",
                                              introduced_year=2020, ordering="name"))
    assert out == ("id\tslug\tname\tfull_name\tarea\tintroduced\tpapers\n"
                   "20\twav2vec-2\twav2vec 2.0\twav2vec 2.0\tAudio\t2020\t45\n")


def test_method_list_tty_json_and_hint(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "methods/": {**WAV2VEC, "count": 600}})
    code, out, err = run_cli(stub.url, ["method", "list", "--page-size", "500", "--order-by", "paper_count",
                                        "--order-dir", "desc"], isatty=True)
    assert (code, err) == (0, "# more: rerun with --page 2\n")
    assert out.splitlines()[0] == "id  slug       name         full_name    area   introduced  papers"
    assert stub.calls[1][1]["ordering"] == "-paper_count"
    code, out, err = run_cli(stub.url, ["method", "list", "--json"])
    # The JSON names each row's area too (the table always did).
    rows: list[dict[str, object]] = WAV2VEC["results"]  # type: ignore[assignment]
    named = {**WAV2VEC, "count": 600, "results": [{**row, "area_name": "Audio"} for row in rows]}
    assert (json_data(out), err) == (named, "")


@pytest.mark.parametrize(("argv", "code", "message"), [
    pytest.param(["--page-size", "501"], 2, "argument --page-size/--limit: --page-size must be 1-500", id="size"),
    pytest.param(["--introduced-year", "new"], 2, "argument --introduced-year: invalid int value", id="year"),
    pytest.param(["--order-by", "stars"], 2, "argument --order-by: invalid choice", id="order"),
    pytest.param(["--area", "Robotics"], 4, "pwc: Area not found: Robotics; available areas: Audio, General",
                 id="area"),
])
def test_method_list_errors(stub: StubCatalog, argv: list, code: int, message: str) -> None:
    stub.routes.update({"areas/": AREAS, "methods/": WAV2VEC})
    result = run_cli(stub.url, ["method", "list", *argv])
    assert result[:2] == (code, "")
    assert message in result[2]
    assert "methods/" not in stub.paths()


def test_method_commands_against_the_sample_catalog(catalog_url: str) -> None:
    code, out, err = run_cli(catalog_url, ["method", "list", "--json"])
    assert code == 0, err
    rows = json_data(out)["results"]
    assert rows
    code, out, err = run_cli(catalog_url, ["method", "--name", str(rows[0]["name"]), "--json"])
    assert code == 0, err
    assert json_data(out)["method"]["id"] == rows[0]["id"]
    code, out, err = run_cli(catalog_url, ["method", "--name", str(rows[0]["name"])])
    assert code == 0 and "[View method](https://paperswithcode.co/methods/" in out
    code, out, err = run_cli(catalog_url, ["method", "list"], isatty=True)
    assert code == 0 and out.split()[:7] == ["id", "slug", "name", "full_name", "area", "introduced", "papers"]
