import { type EncounterState, invitationVisible, type Locale, offerOpen, reaction } from '@yumina/companion';

/**
 * The suspicious tin on the board (seed 001 §3.1): the invitation while its offer is open (it never
 * pauses the board), the sealed tin with its Open button, the revealed contents. No AI call.
 */
export function TinView(props: {
  encounter: EncounterState;
  activeMs: number;
  sun: number;
  nativeLoss: boolean;
  locale: Locale;
  onPay(): void;
  onDecline(): void;
  onOpen(): void;
}) {
  const enc = props.encounter;
  if (enc.phase === 'offered' && offerOpen(enc, props.activeMs) && !props.nativeLoss) {
    return (
      <div className="tin" data-testid="tin-invitation">
        {invitationVisible(enc, props.activeMs) && <p>{reaction('tin-invitation', props.locale)}</p>}
        <button type="button" onClick={props.onPay}>
          Buy the tin (25 sun)
        </button>{' '}
        <button type="button" className="secondary" onClick={props.onDecline}>
          No thanks
        </button>
        {props.sun < 100 && <span className="hint"> You need at least 100 sun.</span>}
      </div>
    );
  }
  if (enc.phase === 'sealed') {
    return (
      <div className="tin" data-testid="tin-sealed">
        A sealed tin.{' '}
        <button type="button" onClick={props.onOpen} disabled={props.nativeLoss}>
          Open the tin
        </button>
      </div>
    );
  }
  if (enc.phase === 'opened') {
    return (
      <p className="tin" data-testid="tin-opened">
        {enc.outcome === 'sun' ? 'The tin held 75 sun.' : 'The tin was empty.'}
      </p>
    );
  }
  return null;
}
