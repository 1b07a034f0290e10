/** The risk level field of version and policy requests, and its runtime check. */
import { z } from 'zod';
import { RISK_LEVELS, type RiskLevel } from '../../runtime/index.js';

/** A risk level field. */
export const riskLevelField = z.enum(RISK_LEVELS);

/** Whether `value` is a {@link RiskLevel}. */
export const isRiskLevel = (value: unknown): value is RiskLevel =>
  (RISK_LEVELS as readonly unknown[]).includes(value);
