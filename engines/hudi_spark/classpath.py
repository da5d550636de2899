"""The classpath of a Hudi Spark writer: Hudi's Spark bundle, s3a (hadoop-aws, the AWS SDK v1 bundle), and the
harness's stand-in for Hudi's S3 lock client (hudi-aws is not served) with the AWS SDK v2 jars it needs."""

from __future__ import annotations

from pathlib import Path

from backends.hudi.artifacts import driver_classpath, spark_jars


def writer_classpath(version: str) -> list[Path]:
    """The extra classpath of a Hudi ``version`` Spark writer, every jar fetched and the stand-in compiled.

    ArtifactError (naming the coordinate) when Hudi ``version`` has no served Spark bundle.
    """
    jars = spark_jars(version)
    driver = driver_classpath(version)
    classes, others = driver[0], driver[1:]
    # of the lock driver's third-party jars, only the AWS SDK v2 and what it alone brings: Spark has its own
    # slf4j, jackson, httpclient, commons-codec and metrics
    sdk = [j for j in others if any(p in str(j) for p in ("/software/amazon/", "/reactivestreams/"))]
    return [*jars, classes, *sdk]
