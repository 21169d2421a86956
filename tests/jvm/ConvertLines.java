// Reads base64 lines on stdin, converts each with Kafka's own converter (args: converter class,
// then key=value settings) and prints one canonical line per input: "ok <schema> <value>" or
// "error <exception class>". tests/test_converters_jvm.py compares it with the model's converters.
// With a first argument --write=BASE64|NUMERIC it prints instead "ok <base64>" of the bytes the S3
// sink's JsonFormat writes for that value (JsonRecordWriterProvider: a Struct through a JsonConverter
// without schemas and with that decimal.format, anything else through Jackson's ObjectMapper), the
// line separator left out.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.storage.Converter;

public class ConvertLines {
    public static void main(String[] args) throws Exception {
        String write = null;
        if (args[0].startsWith("--write=")) {
            write = args[0].substring("--write=".length());
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        }
        Converter c = (Converter) Class.forName(args[0]).getDeclaredConstructor().newInstance();
        Map<String, Object> cfg = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            cfg.put(kv[0], kv[1]);
        }
        c.configure(cfg, false);
        org.apache.kafka.connect.json.JsonConverter out = new org.apache.kafka.connect.json.JsonConverter();
        Map<String, Object> outCfg = new HashMap<>();
        outCfg.put("schemas.enable", "false");
        outCfg.put("decimal.format", write == null ? "BASE64" : write);
        out.configure(outCfg, false);
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            byte[] bytes = line.equals("NULL") ? null : Base64.getDecoder().decode(line);
            try {
                SchemaAndValue sv = c.toConnectData("t", bytes);
                if (write != null) {
                    byte[] json = sv.value() instanceof Struct ? out.fromConnectData("t", sv.schema(), sv.value())
                                                               : mapper.writeValueAsBytes(sv.value());
                    System.out.println("ok " + Base64.getEncoder().encodeToString(json));
                    continue;
                }
                System.out.println("ok " + schema(sv.schema()) + " " + value(sv.value()));
            } catch (Exception e) {
                System.out.println("error " + e.getClass().getSimpleName());
            }
        }
    }

    static String schema(Schema s) {
        if (s == null) return "-";
        StringBuilder b = new StringBuilder(s.type().getName());
        b.append(s.isOptional() ? "?" : "!");
        if (s.name() != null) b.append("<").append(s.name()).append(">");
        if (s.version() != null) b.append("v").append(s.version());
        if (s.parameters() != null && !s.parameters().isEmpty()) {
            List<String> keys = new ArrayList<>(s.parameters().keySet());
            Collections.sort(keys);
            b.append("(");
            for (String k : keys) b.append(k).append("=").append(s.parameters().get(k)).append(";");
            b.append(")");
        }
        if (s.defaultValue() != null) b.append("=").append(value(s.defaultValue()));
        switch (s.type()) {
            case STRUCT:
                b.append("{");
                for (Field f : s.fields()) b.append(f.name()).append(":").append(schema(f.schema())).append(",");
                b.append("}");
                break;
            case ARRAY:
                b.append("[").append(schema(s.valueSchema())).append("]");
                break;
            case MAP:
                b.append("[").append(schema(s.keySchema())).append("->").append(schema(s.valueSchema())).append("]");
                break;
            default:
        }
        return b.toString();
    }

    static String value(Object v) {
        if (v == null) return "null";
        if (v instanceof Boolean) return v.toString();
        if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) return "i" + v;
        if (v instanceof Float) return "f" + Float.toString((Float) v);
        if (v instanceof Double) return "d" + Double.toString((Double) v);
        if (v instanceof String) return "s" + Base64.getEncoder().encodeToString(((String) v).getBytes(StandardCharsets.UTF_8));
        if (v instanceof byte[]) return "b" + Base64.getEncoder().encodeToString((byte[]) v);
        if (v instanceof BigDecimal) return "D" + ((BigDecimal) v).unscaledValue() + "e" + ((BigDecimal) v).scale();
        if (v instanceof java.util.Date) return "t" + ((java.util.Date) v).getTime();
        if (v instanceof List) {
            StringBuilder b = new StringBuilder("[");
            for (Object o : (List<?>) v) b.append(value(o)).append(",");
            return b.append("]").toString();
        }
        if (v instanceof Map) {
            List<String> entries = new ArrayList<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) entries.add(value(e.getKey()) + ":" + value(e.getValue()));
            Collections.sort(entries);
            return "{" + String.join(",", entries) + "}";
        }
        if (v instanceof Struct) {
            StringBuilder b = new StringBuilder("S{");
            Struct st = (Struct) v;
            for (Field f : st.schema().fields()) b.append(f.name()).append("=").append(value(st.get(f))).append(",");
            return b.append("}").toString();
        }
        return "?" + v.getClass().getName();
    }
}
