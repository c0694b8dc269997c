package no.kestrel.dispatch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Posts each shipment to a partner and signs exactly the bytes it posts. */
public final class WebhookPublisher {
    private final ObjectMapper mapper = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
    private final HttpClient http = HttpClient.newHttpClient();
    private final byte[] signingKey;
    private final URI endpoint;

    public WebhookPublisher(byte[] signingKey, URI endpoint) {
        this.signingKey = signingKey.clone();
        this.endpoint = endpoint;
    }

    public int publish(Shipment shipment) throws Exception {
        byte[] body = mapper.writeValueAsBytes(shipment);
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(signingKey, "HmacSHA256"));
        String signature = "sha256=" + HexFormat.of().formatHex(mac.doFinal(body));
        HttpRequest request = HttpRequest.newBuilder(endpoint)
                .header("Content-Type", "application/json; charset=utf-8")
                .header("Kestrel-Signature", signature)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return answer.statusCode();
    }
}
