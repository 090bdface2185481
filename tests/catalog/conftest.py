"""Catalog test fixtures: a small hand-built database (schema + plain INSERTs) and an app client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.db import schema
from catalog.importer import embed
from catalog.importer.derived import update_trend

MARKDOWN = "# Attention\n\nEncoder — décodeur ∑ 中文 😀\n" + "".join(
    f"\n## Section {i}\n\nThe Transformer relies on attention — naïve façade {i}.\n" for i in range(40))

_J = json.dumps

ROWS: dict[str, list[tuple]] = {
    "areas": [(1, "Computer Vision", "computer-vision"), (2, "Natural Language Processing", "nlp")],
    "conferences": [(1, "neurips-2017", "NeurIPS 2017", 2017, "a*", "2017-12-04", "2017-12-09", "Long Beach Convention Center",
                     "Long Beach, USA", "Neural Information Processing Systems.", "https://nips.cc/", None)],
    "papers": [
        # id, arxiv, slug, title, abstract, authors, published, conf, cites, url_abs, url_pdf, source_url,
        # official, repos, popularity, latest, hf_models, hf_datasets, hf_spaces, project_pages
        (1, "1706.03762", "attention-is-all-you-need", "Attention Is All You Need",
         "The dominant sequence transduction models are based on recurrent networks. We propose the Transformer.",
         _J(["Ashish Vaswani", "Noam Shazeer"]), "2017-06-12", 1, 100000, "https://arxiv.org/abs/1706.03762",
         "https://arxiv.org/pdf/1706.03762", None, 1, 2, 50.0, 1, _J(["https://huggingface.co/google/t5"]), "[]", "[]",
         _J([{"url": "https://example.org/transformer", "is_official": True}])),
        (2, "1810.04805", "bert", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
         "We introduce BERT, a language representation model.", _J(["Jacob Devlin", "Ming-Wei Chang"]), "2018-10-11",
         None, 80000, "https://arxiv.org/abs/1810.04805", None, None, 0, 0, 40.0, 1, "[]", "[]", "[]", "[]"),
        (3, "1512.03385", "deep-residual-learning", "Deep Residual Learning for Image Recognition",
         "Deeper neural networks are more difficult to train. We present a residual learning framework.",
         _J(["Kaiming He", "Xiangyu Zhang"]), "2015-12-10", None, 150000, "https://arxiv.org/abs/1512.03385", None,
         None, 1, 1, 30.0, 1, "[]", "[]", "[]", "[]"),
        (4, "math.GT/0309136", "perelman", "Legacy Topology Paper", "Ricci flow with surgery.",
         _J(["Grigori Perelman"]), "2003-09-08", None, 10, None, None, None, 0, 0, 0.0, 1, "[]", "[]", "[]", "[]"),
        (5, None, "dropout", "Dropout: A Simple Way to Prevent Neural Networks from Overfitting",
         "Dropout is a technique for addressing overfitting.", _J(["Nitish Srivastava"]), "2014-06-01", None, 30000,
         None, None, "https://jmlr.org/papers/v15/srivastava14a.html", 0, 0, 5.0, 1, "[]", "[]", "[]", "[]"),
        (6, "2501.00001", "a-shared-title", "A Shared Title", "First one.", _J(["Alex Kim"]), "2025-01-01", None, 1,
         None, None, None, 0, 0, 1.0, 1, "[]", "[]", "[]", "[]"),
        (7, "2501.00002", "a-shared-title-2", "A Shared Title", "Second one.", _J(["Alex Kim"]), "2025-01-02", None, 2,
         None, None, None, 0, 0, 1.0, 1, "[]", "[]", "[]", "[]"),
        (8, "2412.19437", "deepseek-v3", "DeepSeek-V3 Technical Report", "A strong Mixture-of-Experts language model.",
         _J(["DeepSeek-AI"]), "2024-12-27", None, 500, None, None, None, 1, 1, 900.0, 1, "[]", "[]", "[]", "[]"),
        (9, "1706.03761", None, "An Old Version", "Superseded.", "[]", "2017-06-01", None, 0, None, None, None,
         0, 0, 0.0, 0, "[]", "[]", "[]", "[]"),
    ],
    "repositories": [(1, 1, "https://github.com/tensorflow/tensor2tensor", 1, "tf", 15000),
                     (2, 1, "https://github.com/harvardnlp/annotated-transformer", 0, "pytorch", 5000),
                     (3, 3, "https://github.com/KaimingHe/deep-residual-networks", 1, "caffe", 6000),
                     (4, 8, "https://github.com/deepseek-ai/DeepSeek-V3", 1, "pytorch", 90000)],
    "authors": [(1, "Ashish Vaswani", "ashish vaswani", None), (2, "Noam Shazeer", "noam shazeer", None),
                (264, "Kaiming He", "kaiming he", "kaiminghe"), (41, "Alex Kim", "alex kim", "alex-one"),
                (72, "Alex Kim", "alex kim", None), (26405, "Yilun Du", "yilun du", "yilundu")],
    "paper_authors": [(1, 1, 0), (1, 2, 1), (3, 264, 0), (6, 41, 0), (7, 72, 0), (2, 26405, 2)],
    "tasks": [(10, "image-classification", "Image Classification", "Classify images.", 1, None, 0,
               _J(["Vision transformers"]), 1, "2020-01-01"),
              (11, "fine-grained-image-classification", "Fine-Grained Image Classification", None, 1, 10, 1, "[]", 1,
               "2020-01-02"),
              (20, "machine-translation", "Machine Translation", "Translate text.", 2, None, 0, "[]", 1, "2019-01-01"),
              (21, "hidden-task", "Hidden Task", None, 2, None, 0, "[]", 0, "2019-01-02")],
    "paper_tasks": [(1, 20), (2, 20), (3, 10), (8, 20)],
    "methods": [(1, "transformer", "Transformer", "Transformer", "Attention-based architecture.", 2, 2017, 1,
                 "/paper/1706.03762", "Attention Is All You Need", "2020-01-01"),
                (2, "residual-connection", "Residual Connection", "Residual Connection", "Skip connections.", 1, 2015,
                 3, None, None, "2020-01-02")],
    "paper_methods": [(1, 1), (2, 1), (3, 2), (8, 1)],
    "datasets": [(100, "wmt2014-english-german", "WMT2014 English-German", "WMT 2014 English-German",
                  "Translation benchmark.", None, 1, "2020-01-01"),
                 (101, "imagenet", "ImageNet", "ImageNet Large Scale Visual Recognition", "Image benchmark.",
                  "https://huggingface.co/datasets/imagenet-1k", None, "2020-01-02")],
    "dataset_tasks": [(100, 20), (101, 10), (101, 11)],
    "evaluations": [
        (1, 1, 20, 100, "Transformer (big)", None, _J({"BLEU": "28.4"}), "BLEU", 1, 1, 213000000, "0-shot", "test",
         None, None, "/paper/1706.03762", "https://arxiv.org/abs/1706.03762", None,
         "https://github.com/tensorflow/tensor2tensor", None, 0, "2024-01-01T00:00:00Z", None, None, None),
        (2, None, 20, 100, "ConvS2S", None, _J({"BLEU": 25.16}), "BLEU", 2, None, None, None, "test", None, None,
         None, None, None, None, None, None, "2024-01-01T00:00:00Z", "Convolutional Sequence to Sequence Learning",
         "2017-05-08", "https://arxiv.org/abs/1705.03122"),
        (3, 3, 10, 101, "ResNet-152", None, _J({"Top 1 Accuracy": "78.57%"}), "Top 1 Accuracy", 1, 0, 60000000,
         "5-shot", "val", None, None, None, None, None, None, None, 0, "2024-01-01T00:00:00Z", None, None, None),
        (4, 3, 11, 101, "ResNet-152", None, _J({"Top 1 Accuracy": "78.57%"}), "Top 1 Accuracy", 2, 0, 60000000,
         "5-shot", "val", None, None, None, None, None, None, None, 0, "2024-01-01T00:00:00Z", None, None, None),
    ],
    "frameworks": [(1, "pytorch", "PyTorch", "Deep learning framework.", "dl", "Deep Learning", "training", "Training",
                    _J(["linux", "apple"]), "Meta", "Research.", "https://github.com/pytorch/pytorch",
                    "https://pytorch.org/docs", None)],
    "paper_frameworks": [(3, 1)],
    "organizations": [(1, "google", "Google", "Google Research.", 1, 1, 2017, 2018, "https://research.google",
                       None, None),
                      (2, "deepseek", "DeepSeek", None, 0, None, 2024, 2024, None, None, None)],
    "paper_organizations": [(1, 1), (2, 1), (8, 2)],
    "lineage": [(1, 2)],
    "external_metadata": [
        (1, "arxiv", "1301.3781", None, "1301.3781", "Efficient Estimation of Word Representations in Vector Space",
         ["Tomas Mikolov"], "We propose two novel architectures.", "2013-01-16", "[]"),
        (2, "arxiv", "2302.13971", None, None, "LLaMA: Open and Efficient Foundation Language Models",
         ["Hugo Touvron"], "We introduce LLaMA.", "2023-02-27", "[]"),
        (3, "crossref", None, "10.5555/12345", None, "Some Journal Paper", ["Jane Doe"], None, "2010-01-01",
         _J([{"label": "Publisher", "url": "https://publisher.example/12345"}])),
        (4, "arxiv", "1706.03762", None, None, "Attention Is All You Need", ["Ashish Vaswani"], None, "2017-06-12",
         "[]"),
        (5, "arxiv", "2101.00001", None, None, "Same Public Title", ["A"], None, "2021-01-01", "[]"),
        (6, "crossref", None, "10.1000/same", None, "Same Public Title", ["B"], None, "2021-01-01", "[]"),
    ],
}


def build_test_db(path: Path) -> Path:
    """Create a catalog database at ``path`` holding :data:`ROWS` and one Markdown document."""
    conn = schema.create_db(path)
    with conn:
        for table, rows in ROWS.items():
            if table == "external_metadata":
                for (mid, source, arxiv, doi, hf, title, authors, abstract, published, links) in rows:
                    conn.execute(
                        "INSERT INTO external_metadata (id, source, arxiv_id, doi, hf_id, title, normalized_title, "
                        "title_prefix, authors, abstract, published, links) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (mid, source, arxiv, doi, hf, title, schema.normalize_title(title), schema.title_prefix(title),
                         _J(authors), abstract, published, links))
                continue
            if table == "papers":  # the derived trend column (schema v3) is filled below
                rows = [(*row, 0.0) for row in rows]
            marks = ",".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        update_trend(conn)
        conn.execute("INSERT INTO paper_markdown VALUES (?, ?, ?)", (1, MARKDOWN, schema.content_version(MARKDOWN)))
    conn.isolation_level = None
    embed.build_vectors(conn, path).publish()  # the semantic index, as an import builds it
    conn.close()
    return path


@pytest.fixture(scope="session")
def catalog_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small catalog database shared by the catalog tests (read-only use)."""
    return build_test_db(tmp_path_factory.mktemp("catalog") / "test.db")


@pytest.fixture
async def api(aiohttp_client, catalog_db: Path):  # type: ignore[no-untyped-def]
    """An aiohttp test client over ``create_app(catalog_db)``."""
    from catalog.api.app import create_app

    return await aiohttp_client(create_app(catalog_db))
