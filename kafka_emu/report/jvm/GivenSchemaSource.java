// What the report's two data sources share (TraceSource.java, KeptRows.java): a provider found
// by its short name, that reads with the schema the job gives it and never infers one.
package kafka_emu.report.jvm;

import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

abstract class GivenSchemaSource implements TableProvider, DataSourceRegister {
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        throw new IllegalArgumentException(shortName() + " reads with the schema it is given: "
                + "spark.read.format(\"" + shortName() + "\").schema(...)");
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }
}
