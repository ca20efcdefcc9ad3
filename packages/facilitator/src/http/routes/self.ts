// Self-description: GET /openapi.json (generated from the route table) and GET /llms.txt.
import type { Services } from '../../services.js';
import type { AnyRoute } from '../route.js';

export function selfRoutes(s: Services, allRoutes: () => readonly AnyRoute[]): AnyRoute[] {
  void s;
  void allRoutes;
  return [];
}
