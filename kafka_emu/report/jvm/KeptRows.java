// Rows kept in the driver's JVM for a report over small traces (load.py, kept.py): a Spark data
// source, format("kafka-emu-kept"), whose one partition gives the rows of a DataFrame computed
// once by keep(), as they are.
//
// Why it exists: a one-pass report reads the traces into one partition and plans some seven
// hundred DataFrames over three leaves of them (runs, events, requests). Kept as local
// checkpoints, each leaf is an RDD that Spark scans by copying every row through a projection
// of all its columns, interpreted (a one-pass job generates no code): the requests' leaf is read
// about nineteen times, and at 100,000 events those copies were over a quarter of the executor's
// time (a flight recording). The rows kept here are Spark's own UnsafeRows, immutable once kept:
// a scan hands them on without a copy, and the operators above read only the columns they need.
//
// Only a local session uses it: the rows live in this JVM's memory, where a local session's tasks
// run. Python drives it through py4j (keep, forget); the tasks find the rows by their key.
package kafka_emu.report.jvm;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.VoidFunction;
import org.apache.spark.rdd.RDD;
import scala.Option;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

public final class KeptRows extends GivenSchemaSource {
    public static final String NAME = "kafka-emu-kept";
    public static final String KEY = "key";

    private static final Map<String, InternalRow[]> KEPT = new ConcurrentHashMap<>();
    // the partitions of rows being kept, filled by their tasks
    private static final Map<String, InternalRow[][]> FILLING = new ConcurrentHashMap<>();

    // Compute ``rows`` and keep them under ``key``; returns how many. Its tasks run in this JVM
    // (a local session), so each keeps its partition's rows itself: no collect, which would
    // serialize every row, compress it, and read it back.
    public static long keep(String key, Dataset<Row> rows) {
        QueryExecution query = rows.queryExecution();
        RDD<InternalRow> rdd = query.toRdd();
        InternalRow[][] parts = new InternalRow[rdd.getNumPartitions()][];
        FILLING.put(key, parts);
        try {
            // as a Dataset's action runs: its tasks see the session's SQL settings (the time
            // zone, the one-pass job's settings), which an RDD's job alone does not carry
            SQLExecution$.MODULE$.withNewExecutionId(query, Option.apply("kafka-emu kept rows"),
                    () -> {
                        rdd.toJavaRDD().foreachPartition(new Keeper(key, rows.schema()));
                        return null;
                    });
        } finally {
            FILLING.remove(key);
        }
        int total = 0;
        for (InternalRow[] part : parts) {
            total += part.length;
        }
        InternalRow[] all = new InternalRow[total];
        int at = 0;
        for (InternalRow[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        KEPT.put(key, all);
        return total;
    }

    // One task's rows: copies (an operator may hand on the same row object, refilled), as
    // UnsafeRows (what every operator reads fastest).
    static final class Keeper implements VoidFunction<Iterator<InternalRow>> {
        private final String key;
        private final StructType schema;

        Keeper(String key, StructType schema) {
            this.key = key;
            this.schema = schema;
        }

        @Override
        public void call(Iterator<InternalRow> rows) {
            InternalRow[][] parts = FILLING.get(key);
            if (parts == null) {
                throw new IllegalStateException("rows for " + key + " kept from another JVM");
            }
            UnsafeProjection unsafe = null;
            List<InternalRow> kept = new ArrayList<>();
            while (rows.hasNext()) {
                InternalRow row = rows.next();
                if (!(row instanceof UnsafeRow)) {
                    if (unsafe == null) {
                        unsafe = UnsafeProjection.create(schema);
                    }
                    row = unsafe.apply(row);
                }
                kept.add(row.copy());
            }
            parts[TaskContext.getPartitionId()] = kept.toArray(new InternalRow[0]);
        }
    }

    public static void forget(String key) {
        KEPT.remove(key);
    }

    // how many keys are held (the tests check that a report leaves none behind)
    public static int held() {
        return KEPT.size();
    }

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning,
                          Map<String, String> properties) {
        String key = new CaseInsensitiveStringMap(properties).get(KEY);
        if (key == null) {
            throw new IllegalArgumentException(NAME + " needs the option " + KEY);
        }
        return new KeptTable(schema, key);
    }

    static final class KeptTable extends BatchTable implements ScanBuilder, Scan, Batch {
        private final String key;

        KeptTable(StructType schema, String key) {
            super(schema);
            this.key = key;
        }

        @Override
        public String name() {
            return NAME + " " + key;
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return this;  // every column: pruning would mean a copy, which is what this avoids
        }

        @Override
        public Scan build() {
            return this;
        }

        @Override
        public StructType readSchema() {
            return schema;
        }

        @Override
        public String description() {
            return name();
        }

        @Override
        public Batch toBatch() {
            return this;
        }

        @Override
        public InputPartition[] planInputPartitions() {
            return new InputPartition[] {new Part(key)};
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            return new Factory();
        }
    }

    static final class Part implements InputPartition {
        final String key;

        Part(String key) {
            this.key = key;
        }
    }

    static final class Factory implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            String key = ((Part) partition).key;
            InternalRow[] rows = KEPT.get(key);
            if (rows == null) {  // (a task in another JVM, or a report already released)
                throw new IllegalStateException("no rows kept under " + key + " in this JVM");
            }
            return new Reader(rows);
        }
    }

    static final class Reader implements PartitionReader<InternalRow> {
        private final InternalRow[] rows;
        private int next = -1;

        Reader(InternalRow[] rows) {
            this.rows = rows;
        }

        @Override
        public boolean next() {
            return ++next < rows.length;
        }

        @Override
        public InternalRow get() {
            return rows[next];
        }

        @Override
        public void close() {
        }
    }
}
