// One JSON line -> one Spark row of the schema read, with the values Spark's JSON reader gives
// (JacksonParser, in DROPMALFORMED mode): the converters are built once per schema, and each
// writes Spark's internal values directly.
//
// What Spark's reader does, and this does too:
// - a column read as a string takes a JSON string's text, and any other value (a number, an
//   object, an array) as it is written in the line, byte for byte (Spark's exact string
//   parsing, on by default);
// - a long takes only a JSON integer; a double takes a number or "NaN", "Infinity", ...;
//   a boolean only true or false; null is null in any column;
// - a field the schema does not read is skipped unparsed, whatever it holds;
// - a key repeated in an object read as a struct: the last value; in a map: both entries;
// - a line that does not parse, or holds a value of the wrong type in a column read, is
//   dropped, as is a line that is not an object. (Spark reads a top-level array of objects as
//   several rows; a trace never has one, and here it is dropped.) Why a line was dropped is
//   kept (dropReason) so the reader can count it, where Spark's reader keeps the line's text.
package kafka_emu.report.jvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

final class JsonRows {
    // Why parse() dropped its line: the words the report shows.
    static final String UNPARSABLE = "unparsable";  // not JSON, not an object, or cut short
    static final String WRONG_TYPE = "wrong type";  // a value of another type in a column read

    // Spark's JSON options' defaults: single quotes and NaN/Infinity allowed, no length limit
    // on strings.
    private final JsonFactory factory = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_SINGLE_QUOTES)
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE).build())
            .build();
    private final StructConverter root;
    private byte[] line;  // the line being read and where it begins in that array
    private int lineOffset;
    private String dropReason;

    JsonRows(StructType schema) {
        root = new StructConverter(schema);
    }

    // The row of a line, or null when the line is blank or is dropped (see above; then
    // dropReason() says why).
    InternalRow parse(byte[] bytes, int offset, int length) {
        line = bytes;
        lineOffset = offset;
        dropReason = null;
        try (JsonParser parser = factory.createParser(bytes, offset, length)) {
            JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT) {
                dropReason = first == null ? null : UNPARSABLE;  // (null: a blank line)
                return null;
            }
            return (InternalRow) root.convert(parser);
        } catch (Malformed | InputCoercionException e) {
            dropReason = WRONG_TYPE;  // (a coercion: an integer past a long's range)
            return null;
        } catch (IOException e) {
            dropReason = UNPARSABLE;
            return null;
        }
    }

    // Why the last parse() dropped its line, or null when it did not (or the line was blank).
    String dropReason() {
        return dropReason;
    }

    // A value of the wrong type: the line is dropped. Thrown often on a bad file, so it has no
    // stack trace.
    static final class Malformed extends RuntimeException {
        static final Malformed INSTANCE = new Malformed();

        private Malformed() {
            super("malformed", null, false, false);
        }
    }

    // Converts the value at the parser's current token (never VALUE_NULL: the callers map
    // that to null) and leaves the parser on the value's last token.
    interface Converter {
        Object convert(JsonParser parser) throws IOException;
    }

    private Converter converter(DataType type) {
        if (type instanceof StringType) {
            return parser -> parser.currentToken() == JsonToken.VALUE_STRING
                    ? UTF8String.fromString(parser.getText()) : asWritten(parser);
        }
        if (type instanceof LongType) {
            return parser -> {
                if (parser.currentToken() != JsonToken.VALUE_NUMBER_INT) {
                    throw Malformed.INSTANCE;
                }
                return parser.getLongValue();  // out of range: an exception, the line dropped
            };
        }
        if (type instanceof DoubleType) {
            return JsonRows::toDouble;
        }
        if (type instanceof BooleanType) {
            return parser -> {
                switch (parser.currentToken()) {
                    case VALUE_TRUE: return Boolean.TRUE;
                    case VALUE_FALSE: return Boolean.FALSE;
                    default: throw Malformed.INSTANCE;
                }
            };
        }
        if (type instanceof ArrayType) {
            return new ArrayConverter(((ArrayType) type).elementType());
        }
        if (type instanceof MapType) {
            return new MapConverter(((MapType) type).valueType());
        }
        if (type instanceof StructType) {
            return new StructConverter((StructType) type);
        }
        throw new IllegalArgumentException("kafka-emu-traces cannot read a column of " + type);
    }

    private static Object toDouble(JsonParser parser) throws IOException {
        switch (parser.currentToken()) {
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return parser.getDoubleValue();
            case VALUE_STRING:
                switch (parser.getText()) {
                    case "NaN": return Double.NaN;
                    case "+INF": case "+Infinity": case "Infinity": return Double.POSITIVE_INFINITY;
                    case "-INF": case "-Infinity": return Double.NEGATIVE_INFINITY;
                    default: throw Malformed.INSTANCE;
                }
            default:
                throw Malformed.INSTANCE;
        }
    }

    // A value as the line writes it (the parser's offsets count from the line's start).
    private UTF8String asWritten(JsonParser parser) throws IOException {
        long start = parser.currentTokenLocation().getByteOffset();
        parser.skipChildren();  // an object or array: to its end
        long end = parser.currentLocation().getByteOffset();
        return UTF8String.fromBytes(line, lineOffset + (int) start, (int) (end - start));
    }

    private Object value(Converter converter, JsonParser parser) throws IOException {
        return parser.currentToken() == JsonToken.VALUE_NULL ? null : converter.convert(parser);
    }

    private final class ArrayConverter implements Converter {
        private final Converter element;

        ArrayConverter(DataType elementType) {
            element = converter(elementType);
        }

        @Override
        public Object convert(JsonParser parser) throws IOException {
            if (parser.currentToken() != JsonToken.START_ARRAY) {
                throw Malformed.INSTANCE;
            }
            List<Object> values = new ArrayList<>();
            JsonToken token;
            while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
                if (token == null) {
                    throw Malformed.INSTANCE;
                }
                values.add(value(element, parser));
            }
            return new GenericArrayData(values.toArray());
        }
    }

    private final class MapConverter implements Converter {
        private final Converter value;

        MapConverter(DataType valueType) {
            value = converter(valueType);
        }

        @Override
        public Object convert(JsonParser parser) throws IOException {
            if (parser.currentToken() != JsonToken.START_OBJECT) {
                throw Malformed.INSTANCE;
            }
            List<Object> keys = new ArrayList<>();
            List<Object> values = new ArrayList<>();
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                keys.add(UTF8String.fromString(parser.currentName()));
                parser.nextToken();
                values.add(value(value, parser));
            }
            return new ArrayBasedMapData(new GenericArrayData(keys.toArray()),
                                         new GenericArrayData(values.toArray()));
        }
    }

    private final class StructConverter implements Converter {
        private final Map<String, Integer> index = new HashMap<>();
        private final Converter[] fields;

        StructConverter(StructType type) {
            StructField[] declared = type.fields();
            fields = new Converter[declared.length];
            for (int i = 0; i < declared.length; i++) {
                index.put(declared[i].name(), i);
                fields[i] = converter(declared[i].dataType());
            }
        }

        @Override
        public Object convert(JsonParser parser) throws IOException {
            if (parser.currentToken() != JsonToken.START_OBJECT) {
                throw Malformed.INSTANCE;
            }
            Object[] values = new Object[fields.length];
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                Integer field = index.get(parser.currentName());
                parser.nextToken();
                if (field == null) {
                    parser.skipChildren();  // not read: not even checked
                } else {
                    values[field] = value(fields[field], parser);  // a repeated key: the last
                }
            }
            if (token != JsonToken.END_OBJECT) {
                throw Malformed.INSTANCE;
            }
            return new GenericInternalRow(values);
        }
    }
}
