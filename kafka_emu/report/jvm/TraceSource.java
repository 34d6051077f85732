// The trace reader of `kafka-emu report`: a Spark data source, format("kafka-emu-traces"), that
// reads trace files (JSON Lines, plain or compressed) into rows of the schema the job gives.
//
// Why it exists: parsing the traces is most of what the report costs. Spark's JSON reader
// builds a converter chain per field per line that handles every JSON shape; this one builds
// the converters once from the pruned schema and writes straight into Spark's internal rows
// (see JsonRows.java). At 10M events it reads the job's columns in about half the CPU.
//
// It reads what Spark's JSON reader reads with the options load.py gives it (an explicit
// schema, recursiveFileLookup, pathGlobFilter, DROPMALFORMED), with the same rows: a line that
// does not parse, or holds a value of the wrong type in a column read, is dropped -- and
// counted, with why, when the option droppedColumn names a column to say it in (the report's
// way to tell what it skipped; Spark's reader has PERMISSIVE and a corrupt-record column). Files are
// found through Hadoop's FileSystem (local paths, hdfs://, s3a://, ... whatever the cluster
// has), split as Spark splits files, and decompressed by Hadoop's codecs (.gz, .bz2, ...).
// Python drives everything; this file is only read by a JVM. Built by trace_jar.py.
package kafka_emu.report.jvm;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.GlobFilter;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.compress.CompressionCodecFactory;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;

public final class TraceSource extends GivenSchemaSource {
    public static final String NAME = "kafka-emu-traces";
    // The option naming a string column of the schema that, when read, gets a row per line
    // dropped, set to why (TraceReader.java); Spark's JSON reader has its corrupt-record column.
    public static final String DROPPED_COLUMN = "droppedColumn";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning,
                          Map<String, String> properties) {
        // a path that matches nothing is an error here, when the DataFrame is made, as with
        // Spark's file sources, rather than when the job runs
        CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
        Configuration conf = hadoopConf(options);
        try {
            for (String name : paths(options)) {
                matching(new Path(name), conf);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new TraceTable(schema);
    }

    // the cluster's Hadoop settings, plus any the reader's options name (fs.s3a.*, ...), as
    // Spark's own file sources do
    static Configuration hadoopConf(CaseInsensitiveStringMap options) {
        Configuration conf = new Configuration(SparkContext.getOrCreate().hadoopConfiguration());
        for (Map.Entry<String, String> option : options.asCaseSensitiveMap().entrySet()) {
            conf.set(option.getKey(), option.getValue());
        }
        return conf;
    }

    static FileStatus[] matching(Path path, Configuration conf) throws IOException {
        FileStatus[] matched = path.getFileSystem(conf).globStatus(path);
        if (matched == null || matched.length == 0) {
            throw new FileNotFoundException("Path does not exist: " + path);
        }
        return matched;
    }

    static final class TraceTable extends BatchTable {
        TraceTable(StructType schema) {
            super(schema);
        }

        @Override
        public String name() {
            return NAME;  // the plan shows "BatchScan kafka-emu-traces"
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return new TraceScanBuilder(schema, options);
        }
    }

    static final class TraceScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns {
        private StructType schema;
        private final CaseInsensitiveStringMap options;

        TraceScanBuilder(StructType schema, CaseInsensitiveStringMap options) {
            this.schema = schema;
            this.options = options;
        }

        @Override
        public void pruneColumns(StructType requiredSchema) {
            schema = requiredSchema;  // only these columns are converted; the rest are skipped
        }

        @Override
        public Scan build() {
            return new TraceScan(schema, options);
        }
    }

    static final class TraceScan implements Scan, Batch {
        private final StructType schema;
        private final CaseInsensitiveStringMap options;
        private InputPartition[] partitions;  // planned once: the plan and the run share them

        TraceScan(StructType schema, CaseInsensitiveStringMap options) {
            this.schema = schema;
            this.options = options;
        }

        @Override
        public StructType readSchema() {
            return schema;
        }

        @Override
        public String description() {
            return NAME + " " + String.join(", ", paths(options));
        }

        @Override
        public Batch toBatch() {
            return this;
        }

        @Override
        public synchronized InputPartition[] planInputPartitions() {
            if (partitions == null) {
                try {
                    partitions = plan(hadoopConf(options));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            return partitions;
        }

        private InputPartition[] plan(Configuration conf) throws IOException {
            String glob = options.get("pathGlobFilter");
            GlobFilter nameFilter = glob == null ? null : new GlobFilter(glob);
            CompressionCodecFactory codecs = new CompressionCodecFactory(conf);
            List<TracePartition.Chunk> chunks = new ArrayList<>();
            List<FileStatus> files = new ArrayList<>();
            for (String name : paths(options)) {
                Path path = new Path(name);
                FileSystem fs = path.getFileSystem(conf);
                for (FileStatus status : matching(path, conf)) {
                    collect(fs, status, nameFilter, files);
                }
            }
            // Spark's split size (FilePartition.maxSplitBytes): files are cut into pieces so
            // that every core gets work, but no piece is above maxPartitionBytes, and a file
            // costs as much as openCostInBytes more to open.
            SQLConf sql = SQLConf.get();
            long openCost = sql.filesOpenCostInBytes();
            long total = 0;
            for (FileStatus file : files) {
                total += file.getLen() + openCost;
            }
            int cores = Math.max(1, SparkContext.getOrCreate().defaultParallelism());
            long maxSplit = Math.min(sql.filesMaxPartitionBytes(),
                                     Math.max(openCost, total / cores));
            for (FileStatus file : files) {
                String path = file.getPath().toString();
                long length = file.getLen();
                if (codecs.getCodec(file.getPath()) != null) {
                    chunks.add(new TracePartition.Chunk(path, 0, length, true));
                    continue;  // a compressed stream is read from its start, whole
                }
                for (long start = 0; start < length; start += maxSplit) {
                    chunks.add(new TracePartition.Chunk(path, start,
                                                        Math.min(maxSplit, length - start), false));
                }
            }
            // and packed as Spark packs them: largest first, a partition closed when the
            // next piece would take it above the split size
            chunks.sort(Comparator.comparingLong((TracePartition.Chunk c) -> c.length).reversed());
            List<InputPartition> packed = new ArrayList<>();
            List<TracePartition.Chunk> current = new ArrayList<>();
            long size = 0;
            for (TracePartition.Chunk chunk : chunks) {
                if (!current.isEmpty() && size + chunk.length > maxSplit) {
                    packed.add(new TracePartition(current));
                    current = new ArrayList<>();
                    size = 0;
                }
                current.add(chunk);
                size += chunk.length + openCost;
            }
            if (!current.isEmpty()) {
                packed.add(new TracePartition(current));
            }
            return packed.toArray(new InputPartition[0]);
        }

        // A plain recursive listing: Hadoop's located listing asks the local file system for
        // every file's permissions by starting a process per file (13-17 s for 2,000 files).
        private static void collect(FileSystem fs, FileStatus status, GlobFilter nameFilter,
                                    List<FileStatus> into) throws IOException {
            if (status.isDirectory()) {
                for (FileStatus child : fs.listStatus(status.getPath())) {
                    if (!hidden(child.getPath().getName())) {
                        collect(fs, child, nameFilter, into);
                    }
                }
            } else if (nameFilter == null || nameFilter.accept(status.getPath())) {
                into.add(status);
            }
        }

        // what Spark's file listing leaves out: hidden and temporary files and directories
        private static boolean hidden(String name) {
            return (name.startsWith("_") && !name.contains("=")) || name.startsWith(".")
                    || name.endsWith("._COPYING_");
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            JavaSparkContext context = JavaSparkContext.fromSparkContext(SparkContext.getOrCreate());
            Broadcast<SerializableConfiguration> conf =
                    context.broadcast(new SerializableConfiguration(hadoopConf(options)));
            String dropped = options.get(DROPPED_COLUMN);
            int droppedIndex = -1;
            if (dropped != null && java.util.Arrays.asList(schema.fieldNames()).contains(dropped)) {
                droppedIndex = schema.fieldIndex(dropped);
            }
            return new TraceReader.Factory(schema, droppedIndex, conf);
        }
    }

    // DataFrameReader.load passes one path as "path", several as "paths" (a JSON array)
    static List<String> paths(CaseInsensitiveStringMap options) {
        List<String> paths = new ArrayList<>();
        String several = options.get("paths");
        if (several != null) {
            try {
                for (String path : new ObjectMapper().readValue(several, String[].class)) {
                    paths.add(path);
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("paths is not a JSON array: " + several, e);
            }
        }
        String one = options.get("path");
        if (one != null) {
            paths.add(one);
        }
        if (paths.isEmpty()) {
            throw new IllegalArgumentException(NAME + " needs at least one path to read");
        }
        return paths;
    }
}
