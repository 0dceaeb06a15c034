/** An ES module in TypeScript. */
export function area(r: number): number { return Math.PI * r * r; }
export interface Circle { r: number }
export const unit = { r: 1 } satisfies Circle;
export const scale = ((c: Circle, k: number): Circle => ({ r: c.r * k })) satisfies (c: Circle, k: number) => Circle;
