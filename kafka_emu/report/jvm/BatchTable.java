// What the report's two data sources share (TraceSource.java, KeptRows.java): a table read in
// batches, with the schema the job gives it.
package kafka_emu.report.jvm;

import java.util.EnumSet;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.types.StructType;

abstract class BatchTable implements SupportsRead {
    final StructType schema;

    BatchTable(StructType schema) {
        this.schema = schema;
    }

    @Override
    public StructType schema() {
        return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ);
    }
}
