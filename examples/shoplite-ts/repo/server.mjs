// ShopLite's health endpoint: what a recorder checks of a deployment (the service and the commit).
import { createServer } from "node:http";

const commit = process.env.SHOPLITE_COMMIT ?? "unknown";
const server = createServer((req, res) => {
  if (req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ service: "shoplite", commit }));
    return;
  }
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: "not found" }));
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  console.log(`http://127.0.0.1:${port}`);
});
