package no.kestrel.dispatch;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;

/** One dispatch notice, as Kestrel's webhook publisher serialises it (Jackson, declaration order). */
public record Shipment(String event, String ref, Consignee consignee, List<Line> lines, Declared declared) {

    public record Consignee(String name, String city, String country) {}

    /** Prices are money: BigDecimal with two decimals, written by Jackson as they are ("14.50"). */
    public record Line(String sku, int qty, BigDecimal unitPrice) {
        public Line {
            unitPrice = unitPrice.setScale(2, RoundingMode.HALF_EVEN);
        }
    }

    public record Declared(String currency, BigDecimal total) {}

    public static Declared declare(String currency, List<Line> lines) {
        BigDecimal total = lines.stream()
                .map(line -> line.unitPrice().multiply(BigDecimal.valueOf(line.qty())))
                .reduce(BigDecimal.ZERO, BigDecimal::add);
        return new Declared(currency, total.setScale(2, RoundingMode.HALF_EVEN));
    }
}
