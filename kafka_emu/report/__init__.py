"""The PySpark report across trace files (``kafka-emu report``; docs/how-to/traces-and-report.md).

pyspark is an optional extra (``kafka-emu[report]``) imported only inside the functions that use
it; nothing here imports the server. The job uses the DataFrame API only, with the explicit
schema of kafka_emu/trace/schema.py and no Python UDFs, so any Spark cluster -- or a Spark
Connect server -- runs it without kafka-emu on the executors.
"""
