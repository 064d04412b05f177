"""The fitted models feed the ranking pass only: temporary unless ``ranking.keep_models``
(docs/configuration.md), so a run leaves no items x items weights behind by default."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def fit_output_is_temporary(config: dict) -> bool:
    """Whether rule fit's output is temporary in the workflow parsed with ``config``."""
    from snakemake.api import SnakemakeApi
    from snakemake.io import is_flagged
    from snakemake.settings.types import ConfigSettings, ResourceSettings, StorageSettings

    with SnakemakeApi() as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(config=config),
            storage_settings=StorageSettings(),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow
        (model,) = workflow.get_rule("fit").output
        return bool(is_flagged(model, "temp"))


@pytest.mark.parametrize(("ranking", "temporary"), [({}, True), ({"keep_models": True}, False)])
def test_models_are_temporary_unless_kept(ranking, temporary):
    assert fit_output_is_temporary({"ranking": ranking}) is temporary
