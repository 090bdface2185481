"""Both citation tools and the citation resource through one official-SDK session (sample catalog).

Shared by the surface tests (stdio, legacy SSE) so every surface is held to the same answers.
"""

from __future__ import annotations

import json

from mcp import Client


async def cite_and_verify(client: Client) -> None:
    """Call ``cite_papers`` (a short name, an id, a miss) and ``verify_references`` (a real reference, a
    fabricated one), and read one citation resource, asserting what an agent would rely on."""
    cited = await client.call_tool("cite_papers", {"papers": ["BERT", "1706.03762", "No Such Paper Title"]})
    assert not cited.is_error, cited.content
    text = cited.content[0].text
    assert text.startswith("@inproceedings{devlin2019bert,") and "@inproceedings{vaswani2017attention," in text
    assert "% not_found: No Such Paper Title" in text
    items = cited.structured_content["items"]
    assert [(i["reference"], i["status"]) for i in items] == [
        ("BERT", "ok"), ("1706.03762", "ok"), ("No Such Paper Title", "not_found")]

    checked = await client.call_tool("verify_references", {"references": [
        "Vaswani et al. (2017). Attention is all you need. NeurIPS",
        "Attention is not all you need for image recognition"]})
    assert not checked.is_error, checked.content
    assert checked.content[0].text.startswith("1 verified, 1 not_found\n1. verified:")
    assert [i["status"] for i in checked.structured_content["items"]] == ["verified", "not_found"]
    assert checked.structured_content["items"][0]["paper"]["id"] == "1706.03762"

    (content,) = (await client.read_resource("pwc://papers/1810.04805/citation?format=csl-json")).contents
    assert content.mime_type == "application/vnd.citationstyles.csl+json"
    assert json.loads(content.text)[0]["title"].startswith("BERT: Pre-training")
