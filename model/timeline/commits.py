"""Copy-on-write commits of the timeline: the writer of each commit variant, and the model data they leave.

* :class:`HudiWriter` (``model/timeline/hudi_writer.py``): Hudi 1.2.1's commit path, variant ``hudi``;
* :class:`CowWriter` (``model/timeline/v5.py``): Vanlightly's v5 specification, variant ``vanlightly-v5``.

:func:`writer_class` picks one by variant.  :func:`instant_body` / :func:`model_body` read back the
model data (``model/timeline/modeldata.py``) for the checkers and reports.
"""

from __future__ import annotations

from model.timeline.hudi_writer import HudiWriter
from model.timeline.modeldata import instant_body, model_body, table_spec
from model.timeline.v5 import CowWriter

__all__ = ["CowWriter", "HudiWriter", "instant_body", "model_body", "table_spec", "writer_class"]


def writer_class(writer: str) -> type[HudiWriter] | type[CowWriter]:
    """The writer class of a variant's ``writer`` field (``hudi`` or ``v5``)."""
    return HudiWriter if writer == "hudi" else CowWriter
