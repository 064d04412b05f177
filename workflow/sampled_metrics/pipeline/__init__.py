"""The workflow's own support: the configuration (schema, defaults, checks), the files one
stage writes and a later one reads back with checks, and a job's run (logs, checksums of
inputs, threads, locks, provenance).
"""
