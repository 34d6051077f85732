// Reads one TracePartition: its pieces of files, line by line, each line a row (JsonRows.java).
//
// Dropped lines are counted, not lost in silence: when the schema read has the column the
// "droppedColumn" option names, each line dropped is a row of its own with only that column
// set, to why (JsonRows' reasons, or TORN_GZIP); without it they are skipped, as Spark's
// DROPMALFORMED does. A compressed file that ends torn or holds corrupt data (a writer killed
// or a disk filled mid-member) is read up to the last line decompressed whole; the rest is one
// TORN_GZIP row, not a failed job. Each piece sets the file input_file_name() answers, as
// Spark's file sources do, so the report can say which file a drop came from.
package kafka_emu.report.jvm;

import java.io.IOException;
import java.io.InputStream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.compress.CodecPool;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.CompressionCodecFactory;
import org.apache.hadoop.io.compress.Decompressor;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;

final class TraceReader implements PartitionReader<InternalRow> {
    static final String TORN_GZIP = "torn gzip tail";

    static final class Factory implements PartitionReaderFactory {
        private final StructType schema;
        private final int droppedIndex;  // the schema's dropped column, or -1
        private final Broadcast<SerializableConfiguration> conf;

        Factory(StructType schema, int droppedIndex, Broadcast<SerializableConfiguration> conf) {
            this.schema = schema;
            this.droppedIndex = droppedIndex;
            this.conf = conf;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new TraceReader((TracePartition) partition, new JsonRows(schema),
                                   droppedIndex, schema.length(), conf.value().value());
        }
    }

    // Lines are cut from blocks this large; a longer line grows the block to hold it whole.
    private static final int BLOCK_BYTES = 8 << 20;

    private final TracePartition.Chunk[] chunks;
    private final JsonRows rows;
    private final int droppedIndex;
    private final int width;
    private final Configuration conf;
    private final CompressionCodecFactory codecs;
    private int nextChunk;
    private InputStream in;  // the piece being read; null between pieces
    private Decompressor decompressor;  // the compressed piece's, back to the pool when done
    private long end;  // the last offset at which a line of this piece may begin
    private byte[] block = new byte[BLOCK_BYTES];
    private long blockOffset;  // the file offset of block[0]
    private int pos;  // where the next line begins in block
    private int scanned;  // block[pos, scanned) holds no newline
    private int limit;  // block[0, limit) holds bytes read
    private boolean eof;
    private boolean torn;  // the compressed piece failed to decompress: its rest is lost
    private int lineStart;
    private int lineLength;
    private InternalRow row;

    TraceReader(TracePartition partition, JsonRows rows, int droppedIndex, int width,
                Configuration conf) {
        this.chunks = partition.chunks;
        this.rows = rows;
        this.droppedIndex = droppedIndex;
        this.width = width;
        this.conf = conf;
        this.codecs = new CompressionCodecFactory(conf);
    }

    @Override
    public boolean next() throws IOException {
        while (true) {
            if (in == null) {
                if (nextChunk == chunks.length) {
                    return false;
                }
                open(chunks[nextChunk++]);
            }
            if (!nextLine()) {
                boolean lostTail = torn;
                closePiece();
                if (lostTail && droppedIndex >= 0) {
                    row = dropped(TORN_GZIP);
                    return true;
                }
                continue;
            }
            row = rows.parse(block, lineStart, lineLength);
            if (row != null) {
                if (droppedIndex >= 0) {
                    row.setNullAt(droppedIndex);  // (whatever a line's own key of that name held)
                }
                return true;
            }
            String reason = rows.dropReason();  // null: a blank line, which is no loss
            if (reason != null && droppedIndex >= 0) {
                row = dropped(reason);
                return true;
            }
        }
    }

    private InternalRow dropped(String reason) {
        GenericInternalRow drop = new GenericInternalRow(width);
        drop.update(droppedIndex, UTF8String.fromString(reason));
        return drop;
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public void close() throws IOException {
        closePiece();
        InputFileBlockHolder.unset();
    }

    private void open(TracePartition.Chunk chunk) throws IOException {
        Path path = new Path(chunk.path);
        FileSystem fs = path.getFileSystem(conf);
        FSDataInputStream file = fs.open(path);
        InputFileBlockHolder.set(chunk.path, chunk.start, chunk.length);
        blockOffset = chunk.start;
        pos = scanned = limit = 0;
        eof = torn = false;
        if (chunk.compressed) {
            CompressionCodec codec = codecs.getCodec(path);
            decompressor = CodecPool.getDecompressor(codec);
            in = codec.createInputStream(file, decompressor);
            end = Long.MAX_VALUE;
            return;
        }
        in = file;
        end = chunk.start + chunk.length;
        if (chunk.start > 0) {
            file.seek(chunk.start);
            skipToNextLine();  // the line cut by the start belongs to the piece before
        }
    }

    private void skipToNextLine() throws IOException {
        while (true) {
            int newline = find();
            if (newline >= 0) {
                pos = scanned = newline + 1;
                return;
            }
            if (eof) {
                pos = scanned = limit;
                return;
            }
            fill();
        }
    }

    // The next line of this piece into lineStart/lineLength (without its newline); false when
    // the piece has no more lines.
    private boolean nextLine() throws IOException {
        if (blockOffset + pos > end) {
            return false;  // this line and the rest begin in the next piece
        }
        while (true) {
            int newline = find();
            if (newline >= 0) {
                lineStart = pos;
                lineLength = newline - pos;
                pos = scanned = newline + 1;
                return true;
            }
            if (eof) {
                if (pos == limit || torn) {
                    pos = scanned = limit;  // (torn: what follows the last newline is lost)
                    return false;
                }
                lineStart = pos;  // the last line, with no newline after it
                lineLength = limit - pos;
                pos = scanned = limit;
                return true;
            }
            fill();
        }
    }

    private int find() {
        for (int i = scanned; i < limit; i++) {
            if (block[i] == '\n') {
                return i;
            }
        }
        scanned = limit;
        return -1;
    }

    // More bytes after block[limit]: the unread part moved to the block's start first, and the
    // block doubled when one line fills it.
    private void fill() throws IOException {
        if (pos > 0) {
            System.arraycopy(block, pos, block, 0, limit - pos);
            blockOffset += pos;
            scanned -= pos;
            limit -= pos;
            pos = 0;
        }
        if (limit == block.length) {
            byte[] bigger = new byte[block.length * 2];
            System.arraycopy(block, 0, bigger, 0, limit);
            block = bigger;
        }
        int n;
        try {
            n = in.read(block, limit, block.length - limit);
        } catch (IOException e) {
            if (decompressor == null) {
                throw e;  // a plain file that cannot be read: not a damaged trace
            }
            // Hadoop's codecs hand over every byte they decompress before they fail, so what
            // is in the block is good up to its last newline
            torn = true;
            n = -1;
        }
        if (n < 0) {
            eof = true;
        } else {
            limit += n;
        }
    }

    private void closePiece() throws IOException {
        if (in == null) {
            return;
        }
        try {
            in.close();
        } finally {
            in = null;
            torn = false;
            if (decompressor != null) {
                CodecPool.returnDecompressor(decompressor);
                decompressor = null;
            }
        }
    }
}
