// Domain availability (API guide "Domain availability"): up to ten names in one GET
// /domain-availability/{names}; each answer in the user's words — available, taken, or unknown
// with the API's reason. The API judges the names; its errors appear at the field.
import { useState } from 'preact/hooks';
import { api, type Resource } from '../api/client';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { PageHeading } from '../components/page-heading';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';
import './account.css';

interface Availability {
  domain: string;
  available: boolean | null;
  reason: string | null;
}

export function AvailabilityPage() {
  const { t } = useI18n();
  const [names, setNames] = useState('');
  const [answers, setAnswers] = useState<Resource<Availability>[] | null>(null);
  // The API names the list as its path parameter `domains`.
  const check = useSubmit(['domains'], () => 'availability-names');

  const submit = async (e: Event) => {
    e.preventDefault();
    // Commas or white space separate names; the path joins them with commas as the API wants. An
    // empty field still asks (","), so that the API's own "No domain name given." answers.
    const list = names.split(/[\s,]+/).filter(Boolean).map(encodeURIComponent).join(',');
    const ok = await check.run(async () => {
      const { data } = await api<Resource<Availability>[]>('GET', `/domain-availability/${list || ','}`);
      setAnswers(data);
    });
    if (!ok) setAnswers(null);
  };

  const answer = (a: Availability) =>
    a.available === true ? t('availability.free') : a.available === false ? t('availability.taken') : t('availability.unknown', { reason: a.reason ?? '' });

  return (
    <section>
      <PageHeading title={t('availability.title')} />
      <p>{t('availability.intro')}</p>
      <form onSubmit={submit} noValidate class="narrow">
        <FormErrors errors={check.form} />
        <TextField
          id="availability-names"
          label={t('availability.names')}
          hint={t('availability.names.hint')}
          required
          value={names}
          onInput={setNames}
          errors={check.byField.domains}
        />
        <button type="submit" disabled={check.busy}>
          {t('availability.submit')}
        </button>
      </form>
      <div aria-live="polite">
        {answers && (
          <DataTable caption={t('availability.caption')} columns={[t('availability.domain'), t('availability.answer')]}>
            {answers.map((a) => (
              <tr key={a.id} data-availability={a.id}>
                <th scope="row" data-label={t('availability.domain')}>
                  {a.attributes.domain}
                </th>
                <td data-label={t('availability.answer')} class={a.attributes.available === true ? 'ok' : a.attributes.available === false ? 'bad' : undefined}>
                  {answer(a.attributes)}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
