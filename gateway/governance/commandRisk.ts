/**
 * The risk level of a command: what its command version says (an admin sets it when
 * registering the version), otherwise the default of its type below — a reboot or a new
 * workflow or WASM binary changes what a payment device does; a diagnostic or a sync does
 * not. Authorization policies match commands by risk level (policies.ts).
 */
import { RISK_LEVELS, type RiskLevel } from '../../runtime/index.js';

const DEFAULT_RISK: Readonly<Record<string, RiskLevel>> = {
  REBOOT: 'HIGH',
  UPDATE_WORKFLOW: 'HIGH',
  SYNC_WASM: 'HIGH',
  UPDATE_CONFIG: 'MEDIUM',
  SYNC_TRANSACTIONS: 'LOW',
  DIAGNOSTIC: 'LOW',
};

/** The canonical name of a command type (the edge's lower-case aliases share versions). */
export const canonicalCommandType = (type: string): string => type.toUpperCase();

/** The default risk of `commandType` (MEDIUM for a type not listed). */
export const defaultRisk = (commandType: string): RiskLevel =>
  DEFAULT_RISK[canonicalCommandType(commandType)] ?? 'MEDIUM';

/** Whether `level` is at least `floor`. */
export const riskAtLeast = (level: RiskLevel, floor: RiskLevel): boolean =>
  RISK_LEVELS.indexOf(level) >= RISK_LEVELS.indexOf(floor);
