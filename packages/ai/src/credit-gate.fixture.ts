import type { CreditGate, CreditReservation, CreditReserveRequest, SettledUsage, UsageRecord } from './metered.ts';

/** Test stand-in for the billing package: an in-memory balance with reserve-then-settle, 1 credit per token. */
export class InsufficientCreditsError extends Error {
  readonly code = 'INSUFFICIENT_CREDITS';
  readonly status = 402;
}

export class MemoryCredits implements CreditGate {
  readonly log: string[] = [];
  readonly reservations = new Map<string, number>();
  private next = 0;
  constructor(public balance: number) {}

  async reserve(request: CreditReserveRequest): Promise<CreditReservation> {
    const hold = request.estimatedTokensIn + request.maxTokensOut;
    if (hold > this.balance) {
      this.log.push(`refuse ${request.model}`);
      throw new InsufficientCreditsError('Not enough credits');
    }
    const id = `r${++this.next}`;
    this.balance -= hold;
    this.reservations.set(id, hold);
    this.log.push(`reserve ${id} ${request.model} ${hold}`);
    return { id };
  }

  /** Receives the usage record written together with a charge. */
  recorder: ((record: UsageRecord) => Promise<void>) | null = null;

  async settle(reservation: CreditReservation, usage: SettledUsage | null, record: UsageRecord | null): Promise<void> {
    const hold = this.reservations.get(reservation.id);
    if (hold === undefined) throw new Error(`settled twice: ${reservation.id}`);
    this.reservations.delete(reservation.id);
    const cost = usage ? usage.tokensIn + usage.tokensOut : 0;
    this.balance += hold - cost;
    this.log.push(usage ? `settle ${reservation.id} ${usage.model} ${cost}` : `release ${reservation.id}`);
    if (record) await this.recorder?.(record);
  }
}

export function recorder(): { records: UsageRecord[]; record: (r: UsageRecord) => Promise<void> } {
  const records: UsageRecord[] = [];
  return { records, record: async (r) => void records.push(r) };
}
