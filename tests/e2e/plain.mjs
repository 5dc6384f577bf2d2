// An MCP server that is NOT a Pilotage server (Part III 1.3), for testing Pilotage clients: it
// declares no extension, and its tool named `pilotage_manifest` answers something that is not
// a manifest. A conformant client infers nothing from the similar name.
//
// usage: node plain.mjs   # stdio

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "plain", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: "pilotage_manifest", description: "Lists things.", inputSchema: { type: "object" } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => ({
  content: [{ type: "text", text: "hello" }],
  structuredContent: { hello: "world" },
}));
await server.connect(new StdioServerTransport());
