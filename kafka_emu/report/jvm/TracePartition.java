// One task's share of the traces: pieces of files, read one after another (TraceReader.java).
package kafka_emu.report.jvm;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.connector.read.InputPartition;

final class TracePartition implements InputPartition {
    final Chunk[] chunks;

    TracePartition(List<Chunk> chunks) {
        this.chunks = chunks.toArray(new Chunk[0]);
    }

    // Bytes [start, start + length) of a file. The lines read from it are those that begin in
    // (start, start + length], or at 0 for the first piece, as Hadoop's line reader splits: a
    // line cut by a piece's end is read whole by the piece it began in.
    static final class Chunk implements Serializable {
        final String path;
        final long start;
        final long length;
        final boolean compressed;  // read whole from its start, through the file's codec

        Chunk(String path, long start, long length, boolean compressed) {
            this.path = path;
            this.start = start;
            this.length = length;
            this.compressed = compressed;
        }
    }
}
