// Seller revenue (spec: GET /sellers/:payTo/revenue, GET /sellers/:payTo/settlements.csv).
import type { Services } from '../../services.js';
import type { AnyRoute } from '../route.js';

export function sellerRoutes(s: Services): AnyRoute[] {
  void s;
  return [];
}
