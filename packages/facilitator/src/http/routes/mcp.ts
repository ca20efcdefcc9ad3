// POST /mcp: the Model Context Protocol over streamable HTTP.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function registerMcp(app: FastifyInstance, s: Services): void {
  void app;
  void s;
}
