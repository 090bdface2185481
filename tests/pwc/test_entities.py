"""``pwc conference|organization|framework`` detail and ``list`` against a real local HTTP stub (§2.12–§2.14, §6 28–32)."""

from __future__ import annotations

import pytest

from tests.pwc.stub import StubCatalog
from tests.pwc.test_tasks import json_data, run_cli, stub, wire  # noqa: F401 - stub is a fixture

CONFERENCES = {"count": 3, "results": [
    {"id": 5, "slug": "cvpr-2025", "name": "CVPR 2025", "year": 2025, "paper_count": 1834,
     "location": "Nashville, USA"},
    {"id": 6, "slug": "neurips-2025", "name": "NeurIPS 2025", "year": 2025, "paper_count": 2763,
     "location": "San Diego, USA"},
    {"id": 7, "slug": "cvpr-2026", "name": "CVPR 2026", "year": 2026, "paper_count": 10, "location": "Denver, USA"},
]}
CVPR_2026 = {"id": 7, "slug": "cvpr-2026", "name": "CVPR 2026", "year": 2026, "paper_count": 2100, "tier": "a*",
             "start_date": "2026-06-01", "end_date": "2026-06-05", "venue": "Convention Center",
             "location": "Denver, USA", "description": "Vision.", "url": "https://cvpr.thecvf.com",
             "hf_url": None}
ORGS = {"count": 2, "results": [
    {"id": 1, "slug": "nvidia", "name": "NVIDIA", "paper_count": 158, "is_featured": True, "trending_rank": 1},
    {"id": 2, "slug": "small-lab", "name": "Small Lab", "paper_count": 3, "is_featured": False, "trending_rank": None},
]}
NVIDIA = {**ORGS["results"][0], "description": "GPUs.", "first_paper_year": 2012, "latest_paper_year": 2026,
          "website_url": "https://nvidia.com", "github_url": "https://github.com/NVIDIA", "hf_url": None}
FRAMEWORKS = {"domains": [
    {"slug": "llm", "name": "LLM", "categories": [
        {"slug": "inference", "name": "Inference", "frameworks": [
            {"id": 11, "slug": "vllm", "name": "vLLM", "platforms": ["linux"], "paper_count": 12,
             "organization_name": "vLLM Project", "description": "Serving.", "when_to_use": "High throughput.",
             "github_url": "https://github.com/vllm-project/vllm", "docs_url": "https://docs.vllm.ai",
             "introducing_paper_arxiv_id": "2309.06180"},
            {"id": 12, "slug": "llama-cpp", "name": "llama.cpp", "platforms": ["linux", "Apple"], "paper_count": 4}]}]},
    {"slug": "vision", "name": "Vision", "categories": [
        {"slug": "training", "name": "Training", "frameworks": [
            {"id": 13, "slug": "timm", "name": "timm", "platforms": [], "paper_count": 50}]}]},
]}


# ---------------------------------------------------------------- conferences


def test_conference_list_filters_by_year_on_the_client(stub: StubCatalog) -> None:
    stub.routes["conferences/"] = CONFERENCES
    code, out, _ = run_cli(stub.url, ["conference", "list", "--year", "2026"])
    assert code == 0
    assert stub.calls == [("conferences/", {})]
    assert out == "slug\tname\tyear\tpapers\tlocation\ncvpr-2026\tCVPR 2026\t2026\t10\tDenver, USA\n"


def test_conference_list_on_a_tty_is_aligned(stub: StubCatalog) -> None:
    stub.routes["conferences/"] = CONFERENCES
    code, out, _ = run_cli(stub.url, ["conference", "list", "--year", "2025"], isatty=True)
    assert out == ("slug          name          year  papers  location\n"
                   "cvpr-2025     CVPR 2025     2025    1834  Nashville, USA\n"
                   "neurips-2025  NeurIPS 2025  2025    2763  San Diego, USA\n")
    code, out, _ = run_cli(stub.url, ["conference", "list", "--json"])
    assert json_data(out) == {"count": 3, "results": CONFERENCES["results"]}


@pytest.mark.parametrize("name", ["CVPR 2026", "cvpr-2026", "7"])
def test_conference_detail_matches_name_slug_or_id(stub: StubCatalog, name: str) -> None:
    stub.routes.update({"conferences/": CONFERENCES, "conferences/cvpr-2026": CVPR_2026})
    code, out, _ = run_cli(stub.url, ["conference", "--name", name, "--json"])
    assert (code, json_data(out)["slug"]) == (0, "cvpr-2026")
    assert stub.paths() == ["conferences/", "conferences/cvpr-2026"]


def test_conference_detail_text(stub: StubCatalog) -> None:
    stub.routes.update({"conferences/": CONFERENCES, "conferences/cvpr-2026": CVPR_2026})
    code, out, _ = run_cli(stub.url, ["conference", "--name", "CVPR 2026"])
    assert out == ("# CVPR 2026\n\n2026 · 2,100 papers · Tier: A*\n\nDates: 2026-06-01 – 2026-06-05\n\n"
                   "Venue: Convention Center, Denver, USA\n\nVision.\n\n"
                   "[Conference website](https://cvpr.thecvf.com)\n\n"
                   "[View conference](https://paperswithcode.co/conferences/cvpr-2026)\n")
    code, out, _ = run_cli(stub.url, ["conference", "--name", "CVPR 2026"], isatty=True)
    assert out.startswith("CVPR 2026\n") and "Conference website: https://cvpr.thecvf.com" in out


# ---------------------------------------------------------------- organizations


def test_organization_detail_then_featured_list(stub: StubCatalog) -> None:
    stub.routes.update({"organizations/": ORGS, "organizations/nvidia": NVIDIA})
    code, out, _ = run_cli(stub.url, ["organization", "--name", "NVIDIA", "--json"])
    assert (code, json_data(out)) == (0, NVIDIA)
    code, out, err = run_cli(stub.url, ["organization", "list", "--featured-only"])
    assert stub.calls == [("organizations/", wire(featured_only=False)), ("organizations/nvidia", {}),
                          ("organizations/", wire(featured_only=True))]
    assert "1\tnvidia\tNVIDIA\t158\tyes\t1" in out
    assert "2\tsmall-lab\tSmall Lab\t3\tno\t" in out


def test_organization_list_never_prints_a_page_hint(stub: StubCatalog) -> None:
    stub.routes["organizations/"] = {**ORGS, "count": 500}
    code, _, err = run_cli(stub.url, ["organization", "list"])
    assert (code, err) == (0, "")


def test_organization_detail_text(stub: StubCatalog) -> None:
    stub.routes.update({"organizations/": ORGS, "organizations/nvidia": NVIDIA})
    code, out, _ = run_cli(stub.url, ["organization", "--name", "nvidia"], isatty=True)
    assert out == ("NVIDIA\n\n158 papers · Trending rank: 1 · Featured\n\nPaper years: 2012–2026\n\nGPUs.\n\n"
                   "Website: https://nvidia.com\n\nGitHub: https://github.com/NVIDIA\n\n"
                   "View organization: https://paperswithcode.co/orgs/nvidia\n")


# ---------------------------------------------------------------- frameworks


def test_framework_detail_by_id_is_flattened(stub: StubCatalog) -> None:
    stub.routes["frameworks/"] = FRAMEWORKS
    code, out, _ = run_cli(stub.url, ["framework", "--name", "11", "--json"])
    data = json_data(out)
    assert (code, data["slug"], data["domain_slug"], data["category_name"]) == (0, "vllm", "llm", "Inference")
    assert stub.calls == [("frameworks/", {})]


def test_framework_detail_text(stub: StubCatalog) -> None:
    stub.routes["frameworks/"] = FRAMEWORKS
    code, out, _ = run_cli(stub.url, ["framework", "--name", "vLLM"])
    assert out == ("# vLLM\n\nLLM · Inference · vLLM Project · 12 papers\n\nServing.\n\n"
                   "When to use: High throughput.\n\nPlatforms: linux\n\n"
                   "[GitHub](https://github.com/vllm-project/vllm)\n\n[Documentation](https://docs.vllm.ai)\n\n"
                   "[Introducing paper 2309.06180](https://paperswithcode.co/paper/2309.06180)\n\n"
                   "[View framework](https://paperswithcode.co/frameworks/vllm)\n")


@pytest.mark.parametrize(("argv", "slugs"), [
    pytest.param(["--platform", "apple"], ["llama-cpp"], id="platform"),
    pytest.param(["--domain", "VISION"], ["timm"], id="domain-name"),
    pytest.param(["--category", "inference", "--domain", "llm"], ["vllm", "llama-cpp"], id="category-slug"),
    pytest.param([], ["vllm", "llama-cpp", "timm"], id="all"),
])
def test_framework_list_filters_on_the_client(stub: StubCatalog, argv: list, slugs: list) -> None:
    stub.routes["frameworks/"] = FRAMEWORKS
    code, out, _ = run_cli(stub.url, ["framework", "list", *argv, "--json"])
    data = json_data(out)
    assert (code, data["count"], [f["slug"] for f in data["results"]]) == (0, len(slugs), slugs)


def test_framework_list_table(stub: StubCatalog) -> None:
    stub.routes["frameworks/"] = FRAMEWORKS
    code, out, _ = run_cli(stub.url, ["framework", "list", "--platform", "apple"])
    assert out == ("id\tslug\tname\tdomain\tcategory\tplatforms\tpapers\n"
                   "12\tllama-cpp\tllama.cpp\tllm\tinference\tlinux, Apple\t4\n")


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(("argv", "routes", "message"), [
    *(pytest.param([kind], {}, f"pwc: {kind} inspection requires --name\n", id=f"{kind}-no-name")
      for kind in ("conference", "organization", "framework")),
    pytest.param(["conference", "--name", "ICML"], {"conferences/": CONFERENCES},
                 "pwc: Conference not found: ICML; closest results: CVPR 2025, NeurIPS 2025, CVPR 2026\n",
                 id="conference-not-found"),
    pytest.param(["organization", "--name", "Acme"], {"organizations/": {"results": [{"slug": "only-slug"}]}},
                 "pwc: Organization not found: Acme; closest results: only-slug\n", id="organization-not-found"),
    pytest.param(["framework", "--name", "jax"], {"frameworks/": {"domains": []}},
                 "pwc: Framework not found: jax\n", id="framework-not-found"),
    pytest.param(["framework", "list"], {"frameworks/": {"results": []}},
                 "pwc: framework catalog returned an unexpected response shape\n", id="framework-shape"),
])
def test_entity_errors_exit_4(stub: StubCatalog, argv: list, routes: dict, message: str) -> None:
    stub.routes.update(routes)
    assert run_cli(stub.url, argv) == (4, "", message)


@pytest.mark.parametrize("argv", [
    pytest.param(["conference", "list", "--year", "soon"], id="year-int"),
    pytest.param(["organization", "list", "--page", "2"], id="organization-has-no-page"),
    pytest.param(["framework", "list", "--limit", "2"], id="framework-has-no-limit"),
])
def test_entity_parse_errors_exit_2(stub: StubCatalog, argv: list) -> None:
    code, out, err = run_cli(stub.url, argv)
    assert (code, out, stub.calls) == (2, "", [])
    assert "run 'pwc " in err


# ---------------------------------------------------------------- sample catalog


@pytest.mark.parametrize("kind", ["conference", "organization", "framework"])
def test_entity_commands_against_the_sample_catalog(catalog_url: str, kind: str) -> None:
    code, out, err = run_cli(catalog_url, [kind, "list", "--json"])
    assert code == 0, err
    rows = json_data(out)["results"]
    assert rows
    code, out, err = run_cli(catalog_url, [kind, "--name", str(rows[0]["slug"]), "--json"])
    assert code == 0, err
    assert json_data(out)["slug"] == rows[0]["slug"]
    code, out, err = run_cli(catalog_url, [kind, "--name", str(rows[0]["slug"])], isatty=True)
    assert code == 0 and "https://paperswithcode.co/" in out
    code, out, err = run_cli(catalog_url, [kind, "list"])
    assert code == 0 and out.count("\n") == len(rows) + 1
