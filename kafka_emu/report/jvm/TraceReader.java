// Reads one TracePartition: its pieces of files, line by line, each line a row (JsonRows.java).
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
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

final class TraceReader implements PartitionReader<InternalRow> {
    static final class Factory implements PartitionReaderFactory {
        private final StructType schema;
        private final Broadcast<SerializableConfiguration> conf;

        Factory(StructType schema, Broadcast<SerializableConfiguration> conf) {
            this.schema = schema;
            this.conf = conf;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new TraceReader((TracePartition) partition, new JsonRows(schema),
                                   conf.value().value());
        }
    }

    // Lines are cut from blocks this large; a longer line grows the block to hold it whole.
    private static final int BLOCK_BYTES = 8 << 20;

    private final TracePartition.Chunk[] chunks;
    private final JsonRows rows;
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
    private int lineStart;
    private int lineLength;
    private InternalRow row;

    TraceReader(TracePartition partition, JsonRows rows, Configuration conf) {
        this.chunks = partition.chunks;
        this.rows = rows;
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
                closePiece();
                continue;
            }
            row = rows.parse(block, lineStart, lineLength);
            if (row != null) {  // null: a blank line, or one that does not parse (dropped)
                return true;
            }
        }
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public void close() throws IOException {
        closePiece();
    }

    private void open(TracePartition.Chunk chunk) throws IOException {
        Path path = new Path(chunk.path);
        FileSystem fs = path.getFileSystem(conf);
        FSDataInputStream file = fs.open(path);
        blockOffset = chunk.start;
        pos = scanned = limit = 0;
        eof = false;
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
                if (pos == limit) {
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
        int n = in.read(block, limit, block.length - limit);
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
            if (decompressor != null) {
                CodecPool.returnDecompressor(decompressor);
                decompressor = null;
            }
        }
    }
}
