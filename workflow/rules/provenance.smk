# Provenance: what software and which effective configuration produced results/<dataset>/.
# The config is a param, so any change of config.yaml or --config reruns this rule.


rule provenance:
    output:
        versions="results/{dataset}/provenance/versions.txt",
        config="results/{dataset}/provenance/config.yaml",
    log:
        "logs/{dataset}/provenance.log",
    resources:
        runtime=5,
        mem_mb=500,
    params:
        config=config,
    script:
        "../scripts/provenance.py"
